import { Migration } from '@mikro-orm/migrations';

/**
 * Model providers (issue 23): the integration type llm and its providers openai, azure_openai and
 * openai_compatible. Their model is a key of the settings JSON, so no column changes.
 */
export class Migration20261124120000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_type_check";`);
    this.addSql(`alter table "integrations" add constraint "integrations_type_check" check("type" in ('crm', 'psa', 'm365', 'llm'));`);
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_provider_check";`);
    this.addSql(
      `alter table "integrations" add constraint "integrations_provider_check" check("provider" in ('salesforce', 'hubspot', 'connectwise', 'autotask', 'halopsa', 'microsoft365', 'partner_center', 'openai', 'azure_openai', 'openai_compatible'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_provider_check";`);
    this.addSql(
      `alter table "integrations" add constraint "integrations_provider_check" check("provider" in ('salesforce', 'hubspot', 'connectwise', 'autotask', 'halopsa', 'microsoft365', 'partner_center'));`,
    );
    this.addSql(`alter table "integrations" drop constraint if exists "integrations_type_check";`);
    this.addSql(`alter table "integrations" add constraint "integrations_type_check" check("type" in ('crm', 'psa', 'm365'));`);
  }
}
