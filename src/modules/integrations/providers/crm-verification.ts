import type { ProviderSettings } from './provider-settings';
import { jsonOf, ProviderCallOptions, ProviderRequest, ProviderResponse } from './provider-http';
import { notUsable as notUsableBy, refused as refusedBy, unreachable as unreachableBy, verificationCall } from './verification-outcomes';
import { readSalesforceGrant, SALESFORCE_API_VERSION, salesforceReason, salesforceTokenRequest } from './salesforce-auth';

export { SALESFORCE_API_VERSION } from './salesforce-auth';

const NAMES = { hubspot: 'HubSpot', salesforce: 'Salesforce' } as const;
type Crm = keyof typeof NAMES;

export { cleanReason } from './verification-outcomes';

const refused = (crm: Crm, reason: string, credentials: Record<string, string>) => refusedBy(NAMES[crm], reason, credentials);
const unreachable = (crm: Crm, reason: string, credentials: Record<string, string>) => unreachableBy(NAMES[crm], reason, credentials);
const notUsable = (crm: Crm, response: ProviderResponse, credentials: Record<string, string>) => notUsableBy(NAMES[crm], response, credentials);
const call = (crm: Crm, request: ProviderRequest, options: ProviderCallOptions, credentials: Record<string, string>) =>
  verificationCall(NAMES[crm], request, options, credentials);

/** HubSpot's error body ({status, message, correlationId, category}): its message, else the category. */
function hubspotReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { message?: unknown; category?: unknown } | undefined;
  if (typeof body?.message === 'string') return body.message;
  return typeof body?.category === 'string' ? body.category : `answered ${response.status}`;
}

/**
 * HubSpot: a private app's access token, proven by the cheapest authenticated read (one contact).
 * 401 (invalid or expired token) and 403 (missing scopes) are refusals.
 */
async function verifyHubspot(credentials: Record<string, string>, settings: ProviderSettings, deadline: number): Promise<void> {
  const options = { deadline, resolve: settings.resolve, guard: settings.guardConfiguredUrls && !settings.allowPrivateUrls };
  const response = await call(
    'hubspot',
    { method: 'GET', url: `${settings.hubspotApiUrl}/crm/v3/objects/contacts?limit=1`, headers: { authorization: `Bearer ${credentials.access_token}` } },
    options,
    credentials,
  );
  if (response.status >= 200 && response.status < 300) return;
  if (response.status === 401 || response.status === 403) throw refused('hubspot', hubspotReason(response), credentials);
  throw notUsable('hubspot', response, credentials);
}

/**
 * Salesforce: the OAuth 2.0 refresh-token grant against the login host, then the cheapest call on
 * the instance_url it answers (the org's limits). The instance_url comes from the provider, so it
 * passes the address guard unless private addresses are allowed.
 */
async function verifySalesforce(credentials: Record<string, string>, settings: ProviderSettings, deadline: number): Promise<void> {
  const login = { deadline, resolve: settings.resolve, guard: settings.guardConfiguredUrls && !settings.allowPrivateUrls };
  const grant = readSalesforceGrant(await call('salesforce', salesforceTokenRequest(credentials, settings.salesforceLoginUrl), login, credentials));
  if (grant.kind === 'refused') throw refused('salesforce', grant.reason, credentials);
  if (grant.kind === 'unusable') {
    throw grant.response.status === 200 ? unreachable('salesforce', grant.reason, credentials) : notUsable('salesforce', grant.response, credentials);
  }
  const instance = { deadline, resolve: settings.resolve, guard: !settings.allowPrivateUrls };
  const limits = await call(
    'salesforce',
    {
      method: 'GET',
      url: `${grant.instanceUrl}/services/data/${SALESFORCE_API_VERSION}/limits`,
      headers: { authorization: `Bearer ${grant.accessToken}` },
    },
    instance,
    { ...credentials, access_token: grant.accessToken },
  );
  if (limits.status >= 200 && limits.status < 300) return;
  if (limits.status === 401 || limits.status === 403) throw refused('salesforce', salesforceReason(limits), credentials);
  throw notUsable('salesforce', limits, credentials);
}

/**
 * Proves a CRM's credentials with the provider before anything is stored: refused credentials are
 * 422 integration_auth_failed (the provider's reason, never a secret), no usable answer 502
 * integration_unreachable. Every call shares one deadline (settings.timeoutMs in all).
 */
export async function verifyCrmCredentials(provider: Crm, credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const deadline = Date.now() + settings.timeoutMs;
  if (provider === 'hubspot') await verifyHubspot(credentials, settings, deadline);
  else await verifySalesforce(credentials, settings, deadline);
}

export const isVerifiedProvider = (provider: string): provider is Crm => provider === 'hubspot' || provider === 'salesforce';
