import { Migration } from '@mikro-orm/migrations';

export class Migration20261122054007 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "proposals" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "number" text not null, "deal_id" text not null, "title" text not null, "currency" text not null, "customer" jsonb null, "line_items" jsonb not null, "subtotal_minor" bigint not null, "discount_percent_thousandths" int not null, "discount_minor" bigint not null, "tax_percent_thousandths" int not null, "tax_minor" bigint not null, "total_minor" bigint not null, "valid_until" date not null, "notes" text null, "metadata" jsonb not null, "deal_snapshot" jsonb not null, "lead_snapshot" jsonb null, "issuer_name" text not null, constraint "proposals_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "proposals_by_deal" on "proposals" ("deal_id", "created_at", "id");`);
    this.addSql(`alter table "proposals" add constraint "proposals_number_unique" unique ("account_id", "livemode", "number");`);

    this.addSql(
      `create table "proposal_numbers" ("account_id" text not null, "livemode" boolean not null, "last_number" int not null, constraint "proposal_numbers_pkey" primary key ("account_id", "livemode"));`,
    );

    this.addSql(
      `alter table "proposals" add constraint "proposals_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "proposals" add constraint "proposals_deal_id_foreign" foreign key ("deal_id") references "deals" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "proposal_numbers" add constraint "proposal_numbers_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "proposals" cascade;`);

    this.addSql(`drop table if exists "proposal_numbers" cascade;`);
  }
}
