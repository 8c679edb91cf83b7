import { Migration } from '@mikro-orm/migrations';

/**
 * Two-step sign-in (issue 67): a person's TOTP secret (encrypted) and the step of the last code
 * accepted, their recovery codes (hashes, one row each, deleted as used), sign-ins waiting for
 * their code, and an owner's choice to require it of the whole account.
 */
export class Migration20261207210000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "users" add column "totp_secret_encrypted" text null, add column "totp_enabled_at" timestamptz(3) null, add column "totp_last_step" int null;`,
    );
    this.addSql(`alter table "accounts" add column "require_two_factor" boolean not null default false;`);

    this.addSql(
      `create table "recovery_codes" ("code_hash" text not null, "user_id" text not null, "created_at" timestamptz(3) not null, constraint "recovery_codes_pkey" primary key ("code_hash"));`,
    );
    this.addSql(`create index "recovery_codes_user" on "recovery_codes" ("user_id");`);
    this.addSql(
      `alter table "recovery_codes" add constraint "recovery_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "sign_in_challenges" ("token_hash" text not null, "user_id" text not null, "account_id" text not null, "attempts" int not null default 0, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "sign_in_challenges_pkey" primary key ("token_hash"));`,
    );
    this.addSql(`create index "sign_in_challenges_user" on "sign_in_challenges" ("user_id");`);
    this.addSql(
      `alter table "sign_in_challenges" add constraint "sign_in_challenges_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "sign_in_challenges" add constraint "sign_in_challenges_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sign_in_challenges" cascade;`);
    this.addSql(`drop table if exists "recovery_codes" cascade;`);
    this.addSql(`alter table "accounts" drop column "require_two_factor";`);
    this.addSql(`alter table "users" drop column "totp_secret_encrypted", drop column "totp_enabled_at", drop column "totp_last_step";`);
  }
}
