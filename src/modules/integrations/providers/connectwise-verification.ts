import { jsonOf, ProviderResponse } from './provider-http';
import type { ProviderSettings } from './provider-settings';
import { callOptions, isSuccess, notUsable, refused, verificationCall } from './verification-outcomes';

const CONNECTWISE = 'ConnectWise PSA';
/** The Manage REST API's base path on a site (cloud and on-premises alike). */
export const CONNECTWISE_API_PATH = '/v4_6_release/apis/3.0';

/** ConnectWise's error body ({code, message, errors?}): "code: message", else the status. */
function connectwiseReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { code?: unknown; message?: unknown } | undefined;
  if (typeof body?.message === 'string') return typeof body.code === 'string' ? `${body.code}: ${body.message}` : body.message;
  return `answered ${response.status}`;
}

/**
 * ConnectWise PSA (Manage REST API): an API member's key pair, sent as
 * `Authorization: Basic base64("{company_id}+{public_key}:{private_key}")` with the integration's
 * `clientId` header, proven by the cheapest authenticated read, `GET /system/info` on the site
 * (https://{site}, or CONNECTWISE_SITE_URL outside production). 401 (wrong keys, unknown company,
 * missing clientId) and 403 (the member's security role) are refusals. The site is the customer's
 * host, so it passes the address guard unless private addresses are allowed.
 */
export async function verifyConnectwise(credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const deadline = Date.now() + settings.timeoutMs;
  const basic = Buffer.from(`${credentials.company_id}+${credentials.public_key}:${credentials.private_key}`).toString('base64');
  // The header value is as secret as the private key it carries.
  const secrets = { ...credentials, authorization: basic };
  const site = settings.connectwiseSiteUrl ?? `https://${credentials.site}`;
  const response = await verificationCall(
    CONNECTWISE,
    {
      method: 'GET',
      url: `${site}${CONNECTWISE_API_PATH}/system/info`,
      headers: { authorization: `Basic ${basic}`, clientId: credentials.client_id },
    },
    callOptions(settings, deadline, settings.connectwiseSiteUrl ? 'configured' : 'named'),
    secrets,
  );
  if (isSuccess(response)) return;
  if (response.status === 401 || response.status === 403) throw refused(CONNECTWISE, connectwiseReason(response), secrets);
  throw notUsable(CONNECTWISE, response, secrets);
}
