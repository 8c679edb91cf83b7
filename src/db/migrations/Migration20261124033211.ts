import { Migration } from '@mikro-orm/migrations';

/** Restricted keys (their permissions) and rolled keys (the old secret's hash until it expires). */
export class Migration20261124033211 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "api_keys" add column "previous_secret_hash" text null, add column "previous_secret_expires_at" timestamptz(3) null, add column "permissions" jsonb null;`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_previous_secret_hash_unique" unique ("previous_secret_hash");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop constraint "api_keys_previous_secret_hash_unique";`);
    this.addSql(`alter table "api_keys" drop column "previous_secret_hash", drop column "previous_secret_expires_at", drop column "permissions";`);
  }
}
