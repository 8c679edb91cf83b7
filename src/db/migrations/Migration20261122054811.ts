import { Migration } from '@mikro-orm/migrations';

export class Migration20261122054811 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "agents" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "name" text not null, "type" text check ("type" in ('lead_qualifier', 'deal_follow_up', 'proposal_drafter')) not null, "status" text check ("status" in ('draft', 'deployed')) not null default 'draft', "config" jsonb not null, "version" int not null default 0, "deployed_at" timestamptz(3) null, constraint "agents_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agents_list" on "agents" ("account_id", "livemode", "created_at", "id");`);

    this.addSql(
      `create table "agent_follow_ups" ("agent_id" text not null, "deal_id" text not null, "stage_changed_at" timestamptz(3) not null, "created_at" timestamptz(3) not null, constraint "agent_follow_ups_pkey" primary key ("agent_id", "deal_id", "stage_changed_at"));`,
    );

    this.addSql(
      `create table "agent_runs" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "agent_id" text not null, "version" int not null, "trigger" text check ("trigger" in ('event', 'schedule')) not null, "event_id" text null, "event_type" text null, "outcome" text check ("outcome" in ('acted', 'no_action', 'error')) not null, "actions" jsonb not null, "error" text null, "duration_ms" int not null, constraint "agent_runs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_runs_by_agent" on "agent_runs" ("agent_id", "created_at", "id");`);

    this.addSql(
      `create table "agent_versions" ("agent_id" text not null, "version" int not null, "config" jsonb not null, "created_at" timestamptz(3) not null, constraint "agent_versions_pkey" primary key ("agent_id", "version"));`,
    );

    this.addSql(
      `create table "agent_tasks" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "agent_id" text not null, "event_id" text null, "agent_version" int not null, "schedule_slot" bigint null, "attempt_count" int not null default 0, "next_attempt_at" timestamptz(3) not null, "done_at" timestamptz(3) null, constraint "agent_tasks_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_tasks_due" on "agent_tasks" ("next_attempt_at") where "done_at" is null;`);
    this.addSql(`alter table "agent_tasks" add constraint "agent_tasks_slot_unique" unique ("agent_id", "schedule_slot");`);
    this.addSql(`alter table "agent_tasks" add constraint "agent_tasks_event_unique" unique ("agent_id", "event_id");`);

    this.addSql(
      `alter table "agents" add constraint "agents_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_follow_ups" add constraint "agent_follow_ups_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_runs" add constraint "agent_runs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_runs" add constraint "agent_runs_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_versions" add constraint "agent_versions_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "agent_tasks" add constraint "agent_tasks_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_tasks" add constraint "agent_tasks_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_tasks" add constraint "agent_tasks_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "agent_follow_ups" drop constraint "agent_follow_ups_agent_id_foreign";`);

    this.addSql(`alter table "agent_runs" drop constraint "agent_runs_agent_id_foreign";`);

    this.addSql(`alter table "agent_versions" drop constraint "agent_versions_agent_id_foreign";`);

    this.addSql(`alter table "agent_tasks" drop constraint "agent_tasks_agent_id_foreign";`);

    this.addSql(`drop table if exists "agents" cascade;`);

    this.addSql(`drop table if exists "agent_follow_ups" cascade;`);

    this.addSql(`drop table if exists "agent_runs" cascade;`);

    this.addSql(`drop table if exists "agent_versions" cascade;`);

    this.addSql(`drop table if exists "agent_tasks" cascade;`);
  }
}
