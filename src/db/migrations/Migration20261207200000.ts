import { Migration } from '@mikro-orm/migrations';

/**
 * Members (issue 67): a person (`users`) signs in, and belongs to accounts as a `member` with a role.
 * Each account's login becomes its first owner: a user with the account's e-mail, password and
 * verification (ids made from the account's, so the step is repeatable and needs no generator),
 * its sessions and e-mailed links now that user's. Sign-ins keep working.
 */
export class Migration20261207200000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "users" ("id" text not null, "email" text not null, "name" text not null, "password_hash" text null, "email_verified_at" timestamptz(3) null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "users_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(
      `create table "members" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "user_id" text not null, "role" text not null, "status" text check ("status" in ('invited', 'active', 'deactivated')) not null, "last_seen_at" timestamptz(3) null, "invited_by" text null, constraint "members_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "members_user_id_index" on "members" ("user_id");`);
    this.addSql(`create index "members_list" on "members" ("account_id", "created_at", "id");`);
    this.addSql(`alter table "members" add constraint "members_account_user_unique" unique ("account_id", "user_id");`);
    this.addSql(
      `alter table "members" add constraint "members_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "members" add constraint "members_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `insert into "users" ("id", "email", "name", "password_hash", "email_verified_at", "created_at", "updated_at")
       select 'usr_' || substr("id", 6), "email", "name", "password_hash", "email_verified_at", "created_at", "updated_at" from "accounts";`,
    );
    this.addSql(
      `insert into "members" ("id", "created_at", "updated_at", "account_id", "user_id", "role", "status")
       select 'mem_' || substr("id", 6), "created_at", "created_at", "id", 'usr_' || substr("id", 6), 'owner', 'active' from "accounts";`,
    );

    for (const table of ['web_sessions', 'account_email_tokens']) {
      this.addSql(`alter table "${table}" add column "user_id" text null;`);
      this.addSql(`update "${table}" set "user_id" = 'usr_' || substr("account_id", 6);`);
      this.addSql(`alter table "${table}" alter column "user_id" set not null;`);
      this.addSql(`create index "${table}_user" on "${table}" ("user_id");`);
      this.addSql(
        `alter table "${table}" add constraint "${table}_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
      );
    }
    // A link is a person's; only an invitation names the account it invites to.
    this.addSql(`alter table "account_email_tokens" alter column "account_id" drop not null;`);
    this.addSql(`alter table "account_email_tokens" drop constraint if exists "account_email_tokens_purpose_check";`);
    this.addSql(
      `alter table "account_email_tokens" add constraint "account_email_tokens_purpose_check" check ("purpose" in ('verify_email', 'reset_password', 'invitation'));`,
    );
    this.addSql(`alter table "accounts" drop column "password_hash", drop column "email_verified_at";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" add column "password_hash" text null, add column "email_verified_at" timestamptz(3) null;`);
    this.addSql(
      `update "accounts" a set "password_hash" = u."password_hash", "email_verified_at" = u."email_verified_at" from "users" u where u."email" = a."email";`,
    );
    this.addSql(`delete from "account_email_tokens" where "purpose" = 'invitation' or "account_id" is null;`);
    this.addSql(`alter table "account_email_tokens" drop constraint "account_email_tokens_purpose_check";`);
    this.addSql(
      `alter table "account_email_tokens" add constraint "account_email_tokens_purpose_check" check ("purpose" in ('verify_email', 'reset_password'));`,
    );
    this.addSql(`alter table "account_email_tokens" alter column "account_id" set not null;`);
    for (const table of ['web_sessions', 'account_email_tokens']) this.addSql(`alter table "${table}" drop column "user_id";`);
    this.addSql(`drop table if exists "members" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
  }
}
