import { Migration } from '@mikro-orm/migrations';

/**
 * Custom fields (issue 68): their definitions per account and mode, and each lead's and deal's
 * values (`fields`, jsonb, empty for every existing record: adding a column with a constant default
 * rewrites no row).
 */
export class Migration20261208000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "custom_fields" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "object_type" text check ("object_type" in ('lead', 'deal')) not null, "key" text not null, "label" text not null, "type" text check ("type" in ('text', 'long_text', 'number', 'money', 'date', 'datetime', 'boolean', 'select', 'multi_select', 'url', 'email', 'phone', 'member')) not null, "options" jsonb not null, "required" boolean not null default false, "unique" boolean not null default false, "description" text null, constraint "custom_fields_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "custom_fields" add constraint "custom_fields_key_unique" unique ("account_id", "livemode", "object_type", "key");`);
    this.addSql(`create index "custom_fields_list" on "custom_fields" ("account_id", "livemode", "created_at", "id");`);
    this.addSql(
      `alter table "custom_fields" add constraint "custom_fields_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "leads" add column "fields" jsonb not null default '{}';`);
    this.addSql(`alter table "deals" add column "fields" jsonb not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "deals" drop column "fields";`);
    this.addSql(`alter table "leads" drop column "fields";`);
    this.addSql(`drop table if exists "custom_fields" cascade;`);
  }
}
