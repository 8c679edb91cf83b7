import { Migration } from '@mikro-orm/migrations';

export class Migration20261124042858 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_status_check";`);

    this.addSql(
      `alter table "integrations" add column "last_error" text null, add column "last_error_at" timestamptz(3) null, add column "last_synced_at" timestamptz(3) null;`,
    );
    this.addSql(`alter table "integrations" add constraint "integrations_status_check" check("status" in ('connected', 'error', 'disconnected'));`);
    // By hand (MikroORM does not compare expression indexes): an integration in error still holds its provider's place.
    this.addSql(`drop index if exists "integrations_connected_provider_unique";`);
    this.addSql(
      `create unique index "integrations_connected_provider_unique" on "integrations" ("account_id", "livemode", "provider") where "status" <> 'disconnected';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "integrations_connected_provider_unique";`);
    this.addSql(
      `create unique index "integrations_connected_provider_unique" on "integrations" ("account_id", "livemode", "provider") where "status" = 'connected';`,
    );
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_status_check";`);

    this.addSql(`alter table "integrations" drop column "last_error", drop column "last_error_at", drop column "last_synced_at";`);

    this.addSql(`alter table "integrations" add constraint "integrations_status_check" check("status" in ('connected', 'disconnected'));`);
  }
}
