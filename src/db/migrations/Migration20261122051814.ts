import { Migration } from '@mikro-orm/migrations';

export class Migration20261122051814 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "events" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "type" text not null, "api_version" text not null default 'v1', "data" json not null, "fanned_out_at" timestamptz(3) null, constraint "events_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "events_pending_fan_out" on "events" ("id") where "fanned_out_at" is null;`);
    this.addSql(`create index "events_list" on "events" ("account_id", "livemode", "created_at", "id");`);

    this.addSql(
      `create table "webhooks" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "url" text not null, "events" text[] not null, "description" text null, "status" text check ("status" in ('enabled', 'disabled')) not null default 'enabled', "disabled_reason" text null, "secret_encrypted" text not null, constraint "webhooks_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhooks_list" on "webhooks" ("account_id", "livemode", "created_at", "id");`);

    this.addSql(
      `create table "webhook_deliveries" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "event_id" text not null, "webhook_id" text not null, "status" text check ("status" in ('pending', 'succeeded', 'failed', 'canceled')) not null default 'pending', "attempt_count" int not null default 0, "next_attempt_at" timestamptz(3) null, "delivered_at" timestamptz(3) null, constraint "webhook_deliveries_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_deliveries_by_webhook" on "webhook_deliveries" ("webhook_id", "created_at", "id");`);
    this.addSql(`create index "webhook_deliveries_due" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_webhook_unique" unique ("event_id", "webhook_id");`);

    this.addSql(
      `create table "webhook_attempts" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "delivery_id" text not null, "webhook_id" text not null, "event_id" text not null, "attempt_number" int not null, "url" text not null, "response_status" int null, "latency_ms" int not null, "error" text null, "response_snippet" text null, "succeeded" boolean not null, constraint "webhook_attempts_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "webhook_attempts_by_delivery" on "webhook_attempts" ("delivery_id", "created_at", "id");`);
    this.addSql(`create index "webhook_attempts_by_webhook" on "webhook_attempts" ("webhook_id", "created_at", "id");`);

    this.addSql(
      `alter table "events" add constraint "events_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhooks" add constraint "webhooks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_event_id_foreign";`);

    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_webhook_id_foreign";`);

    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_webhook_id_foreign";`);

    this.addSql(`alter table "webhook_attempts" drop constraint "webhook_attempts_delivery_id_foreign";`);

    this.addSql(`drop table if exists "events" cascade;`);

    this.addSql(`drop table if exists "webhooks" cascade;`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);

    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
  }
}
