import { Migration } from '@mikro-orm/migrations';

export class Migration20261124064500 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "integration_sync_runs" add column "resume_at" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "integration_sync_runs" drop column "resume_at";`);
  }
}
