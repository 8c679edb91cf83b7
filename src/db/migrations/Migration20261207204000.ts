import { Migration } from '@mikro-orm/migrations';

/** Who made each change (issue 67): an event's actor and the request behind it (null on events written before). */
export class Migration20261207204000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "events" add column "actor" jsonb null, add column "request" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "events" drop column "actor", drop column "request";`);
  }
}
