import { Migration } from '@mikro-orm/migrations';

/** The lead_router agent type (issue 67): it gives new leads an owner. */
export class Migration20261207206000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "agents" drop constraint "agents_type_check";`);
    this.addSql(
      `alter table "agents" add constraint "agents_type_check" check ("type" in ('lead_qualifier', 'deal_follow_up', 'proposal_drafter', 'follow_up_writer', 'lead_researcher', 'lead_router'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "agents" where "type" = 'lead_router';`);
    this.addSql(`alter table "agents" drop constraint "agents_type_check";`);
    this.addSql(
      `alter table "agents" add constraint "agents_type_check" check ("type" in ('lead_qualifier', 'deal_follow_up', 'proposal_drafter', 'follow_up_writer', 'lead_researcher'));`,
    );
  }
}
