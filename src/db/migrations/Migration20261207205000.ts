import { Migration } from '@mikro-orm/migrations';

/** The security log (issue 67): sign-ins, members, keys, integrations and plan changes, kept 400 days, both modes sharing it. */
export class Migration20261207205000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "security_events" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "type" text not null, "actor" jsonb not null, "member_id" text null, "address" text null, "user_agent" text null, "details" jsonb not null, constraint "security_events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "security_events_list" on "security_events" ("account_id", "created_at", "id");`);
    this.addSql(`create index "security_events_by_type" on "security_events" ("account_id", "type", "created_at", "id");`);
    this.addSql(`create index "security_events_by_member" on "security_events" ("account_id", "member_id", "created_at", "id");`);
    this.addSql(`create index "security_events_created_at" on "security_events" ("created_at");`);
    this.addSql(
      `alter table "security_events" add constraint "security_events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "security_events" cascade;`);
  }
}
