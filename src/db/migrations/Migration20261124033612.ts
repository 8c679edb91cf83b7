import { Migration } from '@mikro-orm/migrations';

/** Event retention deletes by age (events_created_at); roll_secret keeps the previous webhook secret, encrypted, until it expires. */
export class Migration20261124033612 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "events_created_at" on "events" ("created_at");`);

    this.addSql(`alter table "webhooks" add column "previous_secret_encrypted" text null, add column "previous_secret_expires_at" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "events_created_at";`);

    this.addSql(`alter table "webhooks" drop column "previous_secret_encrypted", drop column "previous_secret_expires_at";`);
  }
}
