import { Migration } from '@mikro-orm/migrations';

export class Migration20261124114500 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "agents" drop constraint if exists "agents_status_check";`);
    this.addSql(`alter table "agents" add constraint "agents_status_check" check ("status" in ('draft', 'deployed', 'paused'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "agents" set "status" = 'deployed' where "status" = 'paused';`);
    this.addSql(`alter table "agents" drop constraint if exists "agents_status_check";`);
    this.addSql(`alter table "agents" add constraint "agents_status_check" check ("status" in ('draft', 'deployed'));`);
  }
}
