import { Migration } from '@mikro-orm/migrations';

/**
 * Single sign-on (issue 67): an account's OpenID Connect connection (its client secret encrypted),
 * the e-mail domains it covers (one account per domain), sign-ins under way between the redirect
 * and the issuer's answer, and which connection started a session.
 */
export class Migration20261207211000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "sso_connections" ("id" text not null, "account_id" text not null, "issuer_url" text not null, "client_id" text not null, "client_secret_encrypted" text not null, "default_role" text not null, "require_sso" boolean not null default false, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "sso_connections_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "sso_connections" add constraint "sso_connections_account_unique" unique ("account_id");`);
    this.addSql(
      `alter table "sso_connections" add constraint "sso_connections_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "sso_domains" ("domain" text not null, "connection_id" text not null, "created_at" timestamptz(3) not null, constraint "sso_domains_pkey" primary key ("domain"));`,
    );
    this.addSql(`create index "sso_domains_connection" on "sso_domains" ("connection_id");`);
    this.addSql(
      `alter table "sso_domains" add constraint "sso_domains_connection_id_foreign" foreign key ("connection_id") references "sso_connections" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "sso_attempts" ("token_hash" text not null, "connection_id" text not null, "secrets_encrypted" text not null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "sso_attempts_pkey" primary key ("token_hash"));`,
    );
    this.addSql(`create index "sso_attempts_connection_id_index" on "sso_attempts" ("connection_id");`);
    this.addSql(
      `alter table "sso_attempts" add constraint "sso_attempts_connection_id_foreign" foreign key ("connection_id") references "sso_connections" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "web_sessions" add column "sso_connection_id" text null;`);
    this.addSql(
      `alter table "web_sessions" add constraint "web_sessions_sso_connection_id_foreign" foreign key ("sso_connection_id") references "sso_connections" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "web_sessions" drop column "sso_connection_id";`);
    this.addSql(`drop table if exists "sso_attempts" cascade;`);
    this.addSql(`drop table if exists "sso_domains" cascade;`);
    this.addSql(`drop table if exists "sso_connections" cascade;`);
  }
}
