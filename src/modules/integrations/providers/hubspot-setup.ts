import { createHash } from 'node:crypto';
import { CrmSetupIncomplete } from './crm-client';
import type { HubSpotHttp } from './hubspot-http';
import { ID_PROPERTY } from './hubspot-mapping';
import { jsonOf } from './provider-http';

const PROPERTY_GROUPS = { contacts: 'contactinformation', companies: 'companyinformation', deals: 'dealinformation' } as const;

/**
 * HubSpot accounts (API host and token, hashed) whose `sales_pipeline_id` properties this process
 * has seen in place. Kept in memory rather than on the integration: the check costs three reads,
 * once per integration and process start, which also notices a property deleted while we were
 * down; what is remembered goes stale only when someone deletes a property in HubSpot, and the
 * first write after that says so (IdPropertyMissing), which forgets it and sets it up again.
 * A new token (a reconnect, perhaps to another portal) is checked afresh.
 */
const ready = new Set<string>();

/**
 * Makes sure each object we write (contacts, companies, deals) has the unique-value property
 * `sales_pipeline_id` that upserts are keyed by: read it (GET /crm/v3/properties/{objectType}/
 * {name}); create it when HubSpot has none (POST /crm/v3/properties/{objectType}, 409 when
 * another run made it meanwhile); refuse to go on when someone made it by hand without unique
 * values. Once per account and process, unless forget() is called.
 */
export class HubSpotSetup {
  private readonly account: string;

  constructor(
    private readonly http: HubSpotHttp,
    apiUrl: string,
    token: string,
  ) {
    this.account = createHash('sha256').update(`${apiUrl}\n${token}`).digest('hex');
  }

  async ensure(): Promise<void> {
    if (ready.has(this.account)) return;
    for (const [objectType, groupName] of Object.entries(PROPERTY_GROUPS)) await this.ensureProperty(objectType, groupName);
    ready.add(this.account);
  }

  /** HubSpot said the property is missing: the next ensure() checks again. */
  forget(): void {
    ready.delete(this.account);
  }

  private async ensureProperty(objectType: string, groupName: string): Promise<void> {
    if (await this.hasUniqueProperty(objectType)) return;
    const created = await this.http.post(`/crm/v3/properties/${objectType}`, {
      name: ID_PROPERTY,
      label: 'Sales Pipeline ID',
      description: 'The id of this record in Sales Pipeline, which keeps it in sync. Do not edit.',
      groupName,
      type: 'string',
      fieldType: 'text',
      hasUniqueValue: true,
      formField: false,
    });
    if (created.status === 201 || created.status === 200) return;
    if (created.status !== 409) throw new CrmSetupIncomplete(`HubSpot would not create the ${objectType} property ${ID_PROPERTY}: ${created.reason}`);
    // Made meanwhile, by another run of ours or by someone by hand: it must still require unique values.
    if (!(await this.hasUniqueProperty(objectType))) throw new CrmSetupIncomplete(`HubSpot would not create the ${objectType} property ${ID_PROPERTY}`);
  }

  /** Whether the property exists with unique values (false: it does not exist); one made by hand without them stops the sync. */
  private async hasUniqueProperty(objectType: string): Promise<boolean> {
    const existing = await this.http.send({ method: 'GET', path: `/crm/v3/properties/${objectType}/${ID_PROPERTY}`, limit: 'ten-secondly' });
    if (existing.status === 404) return false;
    const property = existing.status === 200 ? (jsonOf(existing) as { hasUniqueValue?: boolean } | undefined) : undefined;
    if (property?.hasUniqueValue === true) return true;
    throw new CrmSetupIncomplete(
      existing.status === 200
        ? `The HubSpot ${objectType} property ${ID_PROPERTY} exists but does not require unique values; delete it in HubSpot (Settings › Properties) and sync again to have it made as it must be`
        : `HubSpot would not say whether the ${objectType} property ${ID_PROPERTY} exists (answered ${existing.status})`,
    );
  }
}
