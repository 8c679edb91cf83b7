import { Migration } from '@mikro-orm/migrations';

/** Keyset pages of GET /v1/proposals and of GET /v1/events filtered by type or object_id. */
export class Migration20261124012000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "proposals_list" on "proposals" ("account_id", "livemode", "created_at", "id");`);
    this.addSql(`create index "events_by_type" on "events" ("account_id", "livemode", "type", "created_at", "id");`);
    this.addSql(`create index "events_by_object" on "events" ("account_id", "livemode", (("data"->'object'->>'id')), "created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "events_by_object";`);
    this.addSql(`drop index "events_by_type";`);
    this.addSql(`drop index "proposals_list";`);
  }
}
