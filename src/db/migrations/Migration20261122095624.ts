import { Migration } from '@mikro-orm/migrations';

export class Migration20261122095624 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "leads_employees_desc_keyset" on "leads" ("account_id", "livemode", "employees" desc nulls last, "id" desc);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "leads_employees_desc_keyset";`);
  }
}
