import { Migration } from '@mikro-orm/migrations';

export class Migration20261124061812 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "integration_links" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "integration_id" text not null, "object_type" text not null, "object_id" text not null, "external_id" text not null, "external" jsonb not null, "fields" jsonb not null, "synced_at" timestamptz(3) not null, "remote_modified_at" timestamptz(3) null, constraint "integration_links_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "integration_links" add constraint "integration_links_external" unique ("integration_id", "object_type", "external_id");`);
    this.addSql(`alter table "integration_links" add constraint "integration_links_object" unique ("integration_id", "object_type", "object_id");`);

    this.addSql(
      `create table "integration_pending_changes" ("integration_id" text not null, "object_type" text not null, "object_id" text not null, "account_id" text not null, "livemode" boolean not null, "changed_at" timestamptz(3) not null, constraint "integration_pending_changes_pkey" primary key ("integration_id", "object_type", "object_id"));`,
    );

    this.addSql(
      `create table "integration_sync_runs" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "integration_id" text not null, "status" text check ("status" in ('running', 'succeeded', 'failed')) not null default 'running', "trigger" text check ("trigger" in ('connect', 'manual', 'schedule', 'change')) not null, "started_at" timestamptz(3) not null, "finished_at" timestamptz(3) null, "pushed" int not null default 0, "pulled" int not null default 0, "failed" int not null default 0, "to_push" int not null default 0, "error" text null, "lease_until" timestamptz(3) not null, "claims" int not null default 0, constraint "integration_sync_runs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "integration_sync_runs_claimable" on "integration_sync_runs" ("lease_until") where "status" = 'running';`);
    this.addSql(`create unique index "integration_sync_runs_one_running" on "integration_sync_runs" ("integration_id") where "status" = 'running';`);
    this.addSql(`create index "integration_sync_runs_list" on "integration_sync_runs" ("integration_id", "created_at", "id");`);

    this.addSql(
      `create table "integration_sync_failures" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "run_id" text not null, "direction" text check ("direction" in ('push', 'pull')) not null, "object_type" text not null, "object_id" text null, "external_id" text null, "message" text not null, constraint "integration_sync_failures_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "integration_sync_failures_run" on "integration_sync_failures" ("run_id", "id");`);

    this.addSql(
      `alter table "integration_links" add constraint "integration_links_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "integration_links" add constraint "integration_links_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "integration_pending_changes" add constraint "integration_pending_changes_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "integration_sync_runs" add constraint "integration_sync_runs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "integration_sync_runs" add constraint "integration_sync_runs_integration_id_foreign" foreign key ("integration_id") references "integrations" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "integration_sync_failures" add constraint "integration_sync_failures_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "integration_sync_failures" add constraint "integration_sync_failures_run_id_foreign" foreign key ("run_id") references "integration_sync_runs" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "integrations" add column "settings" jsonb not null default '{}', add column "sync_cursors" jsonb not null default '{}';`);
    // CRMs connected before syncing existed get their provider's default stage map, as new ones do (src/modules/integrations/sync/stage-map.ts).
    this.addSql(
      `update "integrations" set "settings" = jsonb_build_object('stageMap', jsonb_build_object('prospecting', 'appointmentscheduled', 'qualification', 'qualifiedtobuy', 'proposal', 'presentationscheduled', 'negotiation', 'contractsent', 'closedWon', 'closedwon', 'closedLost', 'closedlost')) where "provider" = 'hubspot';`,
    );
    this.addSql(
      `update "integrations" set "settings" = jsonb_build_object('stageMap', jsonb_build_object('prospecting', 'Prospecting', 'qualification', 'Qualification', 'proposal', 'Proposal/Price Quote', 'negotiation', 'Negotiation/Review', 'closedWon', 'Closed Won', 'closedLost', 'Closed Lost')) where "provider" = 'salesforce';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "integration_sync_failures" drop constraint "integration_sync_failures_run_id_foreign";`);

    this.addSql(`drop table if exists "integration_links" cascade;`);

    this.addSql(`drop table if exists "integration_pending_changes" cascade;`);

    this.addSql(`drop table if exists "integration_sync_runs" cascade;`);

    this.addSql(`drop table if exists "integration_sync_failures" cascade;`);

    this.addSql(`alter table "integrations" drop column "settings", drop column "sync_cursors";`);
  }
}
