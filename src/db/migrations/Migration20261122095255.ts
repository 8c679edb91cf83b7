import { Migration } from '@mikro-orm/migrations';

export class Migration20261122095255 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "lead_models" add column "rescored_through" text null, add column "rescored_at" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "lead_models" drop column "rescored_through", drop column "rescored_at";`);
  }
}
