import { Migration } from '@mikro-orm/migrations';

export class Migration20261123100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "webhooks" add column "consecutive_failures" int not null default 0, add column "backoff_until" timestamptz(3) null, add column "last_claimed_at" timestamptz(3) null;`,
    );
    this.addSql(`alter table "webhook_deliveries" add column "leased_at" timestamptz(3) null;`);
    // The fair claim walks pending deliveries webhook by webhook (a skip scan), then takes each one's oldest due rows.
    this.addSql(`create index "webhook_deliveries_pending" on "webhook_deliveries" ("webhook_id", "next_attempt_at") where "status" = 'pending';`);
    // Attempts in flight: few rows, counted at every claim.
    this.addSql(`create index "webhook_deliveries_leased" on "webhook_deliveries" ("webhook_id") where "leased_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "webhook_deliveries_leased";`);
    this.addSql(`drop index "webhook_deliveries_pending";`);
    this.addSql(`alter table "webhook_deliveries" drop column "leased_at";`);
    this.addSql(`alter table "webhooks" drop column "consecutive_failures", drop column "backoff_until", drop column "last_claimed_at";`);
  }
}
