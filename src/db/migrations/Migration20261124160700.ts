import { Migration } from '@mikro-orm/migrations';

/**
 * Account e-mail: when each account's address was verified, and the one-time tokens of the
 * verification and password-reset links (only their SHA-256 is stored). Accounts made before
 * verification existed count as verified from their creation, so no one is locked out.
 */
export class Migration20261124160700 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "accounts" add column "email_verified_at" timestamptz(3) null;`);
    this.addSql(`update "accounts" set "email_verified_at" = "created_at";`);
    this.addSql(
      `create table "account_email_tokens" ("token_hash" text not null, "account_id" text not null, "purpose" text check ("purpose" in ('verify_email', 'reset_password')) not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, "used_at" timestamptz(3) null, constraint "account_email_tokens_pkey" primary key ("token_hash"));`,
    );
    this.addSql(`create index "account_email_tokens_account" on "account_email_tokens" ("account_id");`);
    this.addSql(
      `alter table "account_email_tokens" add constraint "account_email_tokens_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "account_email_tokens" cascade;`);
    this.addSql(`alter table "accounts" drop column "email_verified_at";`);
  }
}
