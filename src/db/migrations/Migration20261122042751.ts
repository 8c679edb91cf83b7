import { Migration } from '@mikro-orm/migrations';

export class Migration20261122042751 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "integrations" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "type" text check ("type" in ('crm', 'psa', 'm365')) not null, "provider" text check ("provider" in ('salesforce', 'hubspot', 'connectwise', 'autotask', 'halopsa', 'microsoft365')) not null, "status" text check ("status" in ('connected', 'disconnected')) not null default 'connected', "name" text null, "credentials_encrypted" text null, "credentials_hint" text null, "connected_at" timestamptz(3) not null, "disconnected_at" timestamptz(3) null, constraint "integrations_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "integrations_list" on "integrations" ("account_id", "livemode", "created_at", "id");`);

    this.addSql(
      `create table "deals" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "name" text not null, "lead_id" text null, "value_minor" bigint not null, "currency" text not null default 'USD', "stage" text check ("stage" in ('prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost')) not null default 'prospecting', "expected_close_date" date null, "owner" text null, "metadata" jsonb not null, "stage_changed_at" timestamptz(3) not null, "co_sell_id" text null, "co_sell_status" text check ("co_sell_status" in ('submitted', 'accepted', 'rejected')) null, "co_sell_submitted_at" timestamptz(3) null, "co_sell_decided_at" timestamptz(3) null, "co_sell_integration_id" text null, constraint "deals_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "deals_lead_id_index" on "deals" ("lead_id");`);
    this.addSql(`create index "deals_stage" on "deals" ("account_id", "livemode", "stage", "created_at", "id");`);
    this.addSql(`create index "deals_close_date_keyset" on "deals" ("account_id", "livemode", "expected_close_date", "id");`);
    this.addSql(`create index "deals_value_keyset" on "deals" ("account_id", "livemode", "value_minor", "id");`);
    this.addSql(`create index "deals_created_at_keyset" on "deals" ("account_id", "livemode", "created_at", "id");`);

    this.addSql(
      `create table "deal_stage_changes" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "deal_id" text not null, "from_stage" text check ("from_stage" in ('prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost')) null, "to_stage" text check ("to_stage" in ('prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost')) not null, "changed_at" timestamptz(3) not null, constraint "deal_stage_changes_pkey" primary key ("id"));`,
    );

    this.addSql(`create index "deal_stage_changes_deal_id_index" on "deal_stage_changes" ("deal_id", "changed_at", "id");`);
    // One connected integration per provider, account and mode; disconnected ones are history.
    this.addSql(
      `create unique index "integrations_connected_provider_unique" on "integrations" ("account_id", "livemode", "provider") where "status" = 'connected';`,
    );

    this.addSql(
      `alter table "integrations" add constraint "integrations_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "deals" add constraint "deals_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "deals" add constraint "deals_lead_id_foreign" foreign key ("lead_id") references "leads" ("id") on update cascade on delete set null;`,
    );

    this.addSql(
      `alter table "deal_stage_changes" add constraint "deal_stage_changes_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "deal_stage_changes" add constraint "deal_stage_changes_deal_id_foreign" foreign key ("deal_id") references "deals" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "deal_stage_changes" drop constraint "deal_stage_changes_deal_id_foreign";`);

    this.addSql(`drop table if exists "integrations" cascade;`);

    this.addSql(`drop table if exists "deals" cascade;`);

    this.addSql(`drop table if exists "deal_stage_changes" cascade;`);
  }
}
