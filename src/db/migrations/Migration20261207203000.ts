import { Migration } from '@mikro-orm/migrations';

/** Owners (issue 67): a lead or deal is owned by a member (their person's usr_ id) or by nobody; lists filter by it, deals sort by it. */
export class Migration20261207203000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "leads" add column "owner_id" text null;`);
    this.addSql(`alter table "deals" add column "owner_id" text null;`);
    this.addSql(`create index "leads_owner" on "leads" ("account_id", "livemode", "owner_id", "created_at", "id");`);
    this.addSql(`create index "deals_owner_keyset" on "deals" ("account_id", "livemode", "owner_id", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "leads_owner";`);
    this.addSql(`drop index "deals_owner_keyset";`);
    this.addSql(`alter table "leads" drop column "owner_id";`);
    this.addSql(`alter table "deals" drop column "owner_id";`);
  }
}
