import { Migration } from '@mikro-orm/migrations';

export class Migration20261122041947 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "idempotency_keys" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "key" text not null, "request_hash" text not null, "state" text check ("state" in ('running', 'done')) not null default 'running', "locked_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "response_status" smallint null, "response_type" text null, "response_body" text null, constraint "idempotency_keys_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "idempotency_keys_expires_at" on "idempotency_keys" ("expires_at");`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_key_unique" unique ("account_id", "livemode", "key");`);

    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys" cascade;`);
  }
}
