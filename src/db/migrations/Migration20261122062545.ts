import { Migration } from '@mikro-orm/migrations';

export class Migration20261122062545 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "web_sessions" ("token_hash" text not null, "account_id" text not null, "csrf_token" text not null, "livemode" boolean not null default false, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "new_key_encrypted" text null, constraint "web_sessions_pkey" primary key ("token_hash"));`,
    );
    this.addSql(`create index "web_sessions_account" on "web_sessions" ("account_id");`);

    this.addSql(
      `alter table "web_sessions" add constraint "web_sessions_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "web_sessions" cascade;`);
  }
}
