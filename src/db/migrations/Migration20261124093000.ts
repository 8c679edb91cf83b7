import { Migration } from '@mikro-orm/migrations';

export class Migration20261124093000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "deals" add column "external_ids" jsonb not null default '[]';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "deals" drop column "external_ids";`);
  }
}
