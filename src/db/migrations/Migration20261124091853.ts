import { Migration } from '@mikro-orm/migrations';

/**
 * Co-sell that reaches Partner Center: the partner_center provider, the referral id and the
 * status reason on a deal's co-sell registration, the statuses expired and won, and the rows the
 * co-sell worker claims (one per live registration it still follows).
 */
export class Migration20261124091853 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "co_sell_syncs" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "deal_id" text not null, "integration_id" text not null, "due_at" timestamptz(3) not null, "claims" int not null default 0, "failures" int not null default 0, "last_error" text null, constraint "co_sell_syncs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "co_sell_syncs_deal_id_index" on "co_sell_syncs" ("deal_id");`);
    this.addSql(`create index "co_sell_syncs_due" on "co_sell_syncs" ("due_at");`);
    this.addSql(
      `alter table "co_sell_syncs" add constraint "co_sell_syncs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "co_sell_syncs" add constraint "co_sell_syncs_deal_id_foreign" foreign key ("deal_id") references "deals" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "integrations" drop constraint if exists "integrations_provider_check";`);
    this.addSql(
      `alter table "integrations" add constraint "integrations_provider_check" check("provider" in ('salesforce', 'hubspot', 'connectwise', 'autotask', 'halopsa', 'microsoft365', 'partner_center'));`,
    );

    // Registrations made before keep null: test mode never has a referral, and an earlier live one was never sent.
    this.addSql(`alter table "deals" add column "co_sell_referral_id" text null, add column "co_sell_status_reason" text null;`);
    this.addSql(`alter table "deals" drop constraint if exists "deals_co_sell_status_check";`);
    this.addSql(
      `alter table "deals" add constraint "deals_co_sell_status_check" check("co_sell_status" in ('submitted', 'accepted', 'rejected', 'expired', 'won'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "co_sell_syncs" cascade;`);
    this.addSql(`alter table "deals" drop constraint if exists "deals_co_sell_status_check";`);
    this.addSql(`alter table "deals" drop column "co_sell_referral_id", drop column "co_sell_status_reason";`);
    this.addSql(`alter table "deals" add constraint "deals_co_sell_status_check" check("co_sell_status" in ('submitted', 'accepted', 'rejected'));`);
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_provider_check";`);
    this.addSql(
      `alter table "integrations" add constraint "integrations_provider_check" check("provider" in ('salesforce', 'hubspot', 'connectwise', 'autotask', 'halopsa', 'microsoft365'));`,
    );
  }
}
