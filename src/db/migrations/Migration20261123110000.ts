import { Migration } from '@mikro-orm/migrations';

export class Migration20261123110000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "proposal_pdfs" ("proposal_id" text not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "account_id" text not null, "livemode" boolean not null, "etag" text not null, "bytes" bytea not null, constraint "proposal_pdfs_pkey" primary key ("proposal_id"));`,
    );

    this.addSql(
      `alter table "proposal_pdfs" add constraint "proposal_pdfs_proposal_id_foreign" foreign key ("proposal_id") references "proposals" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "proposal_pdfs" add constraint "proposal_pdfs_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "proposal_pdfs" cascade;`);
  }
}
