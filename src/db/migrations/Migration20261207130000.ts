import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys scoped per caller (the API key's id, or `web` for the session) instead of per
 * account and mode: a stored answer is replayed only to the key that made the request. Keys stored
 * before get `''`, which every caller of their tenant still matches until they expire (24 h), so a
 * retry across the deploy replays instead of running twice.
 */
export class Migration20261207130000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "idempotency_keys" add column "principal" text not null default '';`);
    this.addSql(`alter table "idempotency_keys" alter column "principal" drop default;`);
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_key_unique";`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_key_unique" unique ("account_id", "livemode", "principal", "key");`);
  }

  override async down(): Promise<void> {
    // Back to one row per key: a key several callers used keeps its newest answer.
    this.addSql(
      `delete from "idempotency_keys" k using "idempotency_keys" n where n."account_id" = k."account_id" and n."livemode" = k."livemode" and n."key" = k."key" and (n."updated_at", n."id") > (k."updated_at", k."id");`,
    );
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_key_unique";`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_key_unique" unique ("account_id", "livemode", "key");`);
    this.addSql(`alter table "idempotency_keys" drop column "principal";`);
  }
}
