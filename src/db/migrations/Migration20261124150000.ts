import { Migration } from '@mikro-orm/migrations';

/**
 * Agents that write: the types follow_up_writer and lead_researcher, the model usage of each run,
 * and the suggestions writers make for people to approve or reject.
 */
export class Migration20261124150000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "agents" drop constraint if exists "agents_type_check";`);
    this.addSql(
      `alter table "agents" add constraint "agents_type_check" check ("type" in ('lead_qualifier', 'deal_follow_up', 'proposal_drafter', 'follow_up_writer', 'lead_researcher'));`,
    );
    this.addSql(`alter table "agent_runs" add column "usage" jsonb null;`);
    this.addSql(
      `create table "agent_suggestions" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "agent_id" text not null, "run_id" text not null, "kind" text check ("kind" in ('follow_up_email', 'lead_brief')) not null, "status" text check ("status" in ('pending', 'approved', 'rejected', 'expired')) not null default 'pending', "lead_id" text null, "deal_id" text null, "content" jsonb not null, "approved_content" jsonb null, "generated_by" text check ("generated_by" in ('model', 'template')) not null, "model" text null, "generation_error" text null, "approved_automatically" boolean not null default false, "expires_at" timestamptz(3) not null, "decided_at" timestamptz(3) null, constraint "agent_suggestions_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "agent_suggestions_by_agent" on "agent_suggestions" ("agent_id", "created_at", "id");`);
    this.addSql(`create index "agent_suggestions_pending" on "agent_suggestions" ("expires_at") where "status" = 'pending';`);
    this.addSql(
      `alter table "agent_suggestions" add constraint "agent_suggestions_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "agent_suggestions" add constraint "agent_suggestions_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "agent_suggestions" cascade;`);
    this.addSql(`alter table "agent_runs" drop column "usage";`);
    this.addSql(`delete from "agents" where "type" in ('follow_up_writer', 'lead_researcher');`);
    this.addSql(`alter table "agents" drop constraint if exists "agents_type_check";`);
    this.addSql(`alter table "agents" add constraint "agents_type_check" check ("type" in ('lead_qualifier', 'deal_follow_up', 'proposal_drafter'));`);
  }
}
