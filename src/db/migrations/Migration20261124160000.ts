import { Migration } from '@mikro-orm/migrations';

/**
 * The accounts' request logs (issue 24): one row per authenticated request, written in batches off
 * the request path, kept 7 days. Indexes: the list (newest first), its errors filter (a partial
 * index of status >= 400), and created_at alone for the retention job's deletes by age.
 */
export class Migration20261124160000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "request_logs" ("id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "method" text not null, "route" text not null, "operation_name" text null, "status" smallint not null, "request_id" text not null, "key_prefix" text null, "latency_ms" double precision not null, constraint "request_logs_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "request_logs_list" on "request_logs" ("account_id", "livemode", "created_at", "id");`);
    this.addSql(`create index "request_logs_errors" on "request_logs" ("account_id", "livemode", "created_at", "id") where "status" >= 400;`);
    this.addSql(`create index "request_logs_created_at" on "request_logs" ("created_at");`);
    this.addSql(
      `alter table "request_logs" add constraint "request_logs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "request_logs" cascade;`);
  }
}
