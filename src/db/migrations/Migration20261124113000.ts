import { Migration } from '@mikro-orm/migrations';

/**
 * Agents' follow-ups delivered to Microsoft 365. deal_follow_up agents gain `deliver_to` (default
 * `none`: only the agent.action event, as before): working configs made before it show the default
 * like new ones; deployed versions stay as frozen (a version without it delivers nowhere, which is
 * what `none` means). A run's deliveries are read by their action ids, failures included.
 */
export class Migration20261124113000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `update "agents" set "config" = "config" || cast('{"deliver_to": "none"}' as jsonb) where "type" = 'deal_follow_up' and "config"->'deliver_to' is null;`,
    );
    this.addSql(`create index "integration_sync_failures_object" on "integration_sync_failures" ("object_type", "object_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "integration_sync_failures_object";`);
    this.addSql(`update "agents" set "config" = "config" - 'deliver_to' where "type" = 'deal_follow_up';`);
  }
}
