import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox's queue in a table of its own (EventFanOut): an event still to fan out is a row of
 * `event_fan_outs`, which the fan-out deletes, instead of `events.fanned_out_at is null`, which it
 * set, making a new version of the event's wide row and an entry in each of the table's indexes.
 * A statement-level trigger queues every inserted event in the inserting statement, whichever code
 * wrote it; an event written with its work already made (webhook.test) is taken off the queue by
 * its own transaction. Events pending now are queued as they are.
 */
export class Migration20261130173000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "event_fan_outs" ("event_id" text not null, "account_id" text not null, "livemode" boolean not null, constraint "event_fan_outs_pkey" primary key ("event_id"));`,
    );
    this.addSql(
      `alter table "event_fan_outs" add constraint "event_fan_outs_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `insert into "event_fan_outs" ("event_id", "account_id", "livemode") select "id", "account_id", "livemode" from "events" where "fanned_out_at" is null;`,
    );
    this.addSql(`drop index "events_pending_fan_out";`);
    this.addSql(`alter table "events" drop column "fanned_out_at";`);
    this.addSql(`create function "events_queue_fan_out"() returns trigger language plpgsql as $$
begin
  insert into "event_fan_outs" ("event_id", "account_id", "livemode") select "id", "account_id", "livemode" from "inserted";
  return null;
end
$$;`);
    this.addSql(
      `create trigger "events_queue_fan_out" after insert on "events" referencing new table as "inserted" for each statement execute function "events_queue_fan_out"();`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "events_queue_fan_out" on "events";`);
    this.addSql(`drop function "events_queue_fan_out"();`);
    this.addSql(`alter table "events" add column "fanned_out_at" timestamptz(3) null;`);
    this.addSql(`update "events" set "fanned_out_at" = now() where not exists (select 1 from "event_fan_outs" q where q."event_id" = "events"."id");`);
    this.addSql(`create index "events_pending_fan_out" on "events" ("id") where "fanned_out_at" is null;`);
    this.addSql(`drop table "event_fan_outs";`);
  }
}
