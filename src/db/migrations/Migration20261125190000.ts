import { Migration } from '@mikro-orm/migrations';

/**
 * A stored PDF keeps the name it is downloaded under (the proposal's number, frozen with it), so the
 * download reads one row by its key instead of the proposal and then its PDF.
 */
export class Migration20261125190000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "proposal_pdfs" add column "filename" text null;`);
    this.addSql(
      `update "proposal_pdfs" set "filename" = "proposals"."number" || '.pdf' from "proposals" where "proposals"."id" = "proposal_pdfs"."proposal_id";`,
    );
    this.addSql(`alter table "proposal_pdfs" alter column "filename" set not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "proposal_pdfs" drop column "filename";`);
  }
}
