import { Migration } from '@mikro-orm/migrations';

export class Migration20261122035452 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "accounts" ("id" text not null, "name" text not null, "email" text not null, "plan" text check ("plan" in ('starter', 'professional', 'enterprise')) not null default 'starter', "custom_limits" jsonb null, "password_hash" text null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "accounts_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "accounts" add constraint "accounts_email_unique" unique ("email");`);

    this.addSql(
      `create table "api_keys" ("id" text not null, "account_id" text not null, "name" text not null, "type" text check ("type" in ('test', 'live')) not null, "prefix" text not null, "last4" text not null, "secret_hash" text not null, "created_at" timestamptz(3) not null, "last_used_at" timestamptz(3) null, "revoked_at" timestamptz(3) null, constraint "api_keys_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_secret_hash_unique" unique ("secret_hash");`);
    this.addSql(`create index "api_keys_account_id_created_at_index" on "api_keys" ("account_id", "created_at");`);

    this.addSql(
      `create table "leads" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "company" text not null, "contact_email" text not null, "contact_name" text null, "industry" text null, "employees" int null, "website" text null, "country" text null, "source" text null, "status" text check ("status" in ('new', 'contacted', 'qualified', 'disqualified', 'converted')) not null default 'new', "score" smallint not null, "score_label" text check ("score_label" in ('hot', 'warm', 'cold')) not null, "score_signals" jsonb not null, "score_base" smallint not null, "model_version" text not null, "scored_at" timestamptz(3) not null, "metadata" jsonb not null, constraint "leads_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "leads_employees_keyset" on "leads" ("account_id", "livemode", "employees", "id");`);
    this.addSql(`create index "leads_company_keyset" on "leads" ("account_id", "livemode", "company", "id");`);
    this.addSql(`create index "leads_score_keyset" on "leads" ("account_id", "livemode", "score", "id");`);
    this.addSql(`create index "leads_created_at_keyset" on "leads" ("account_id", "livemode", "created_at", "id");`);
    this.addSql(`alter table "leads" add constraint "leads_contact_email_unique" unique ("account_id", "livemode", "contact_email");`);

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "leads" add constraint "leads_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop constraint "api_keys_account_id_foreign";`);

    this.addSql(`alter table "leads" drop constraint "leads_account_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);

    this.addSql(`drop table if exists "api_keys" cascade;`);

    this.addSql(`drop table if exists "leads" cascade;`);
  }
}
