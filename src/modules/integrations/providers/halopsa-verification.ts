import { jsonOf, ProviderResponse } from './provider-http';
import type { ProviderSettings } from './provider-settings';
import { callOptions, isSuccess, notUsable, refused, unreachable, verificationCall } from './verification-outcomes';

const HALOPSA = 'HaloPSA';

/** HaloPSA's errors: {error, error_description} from the token endpoint, {message} or a plain text from the API. */
function halopsaReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { error?: unknown; error_description?: unknown; message?: unknown } | string | undefined;
  if (typeof body === 'string') return body;
  if (typeof body?.error === 'string') return typeof body.error_description === 'string' ? `${body.error}: ${body.error_description}` : body.error;
  if (typeof body?.message === 'string') return body.message;
  return `answered ${response.status}`;
}

/**
 * HaloPSA: a client-credentials application of the customer's instance. The OAuth 2.0
 * client-credentials grant on the instance, `POST {instance_url}/auth/token` (form: grant_type,
 * client_id, client_secret, scope=all; 400/401 {error, error_description} when refused), then the
 * cheapest authenticated read, `GET {instance_url}/api/Agent/me` (the agent the application acts
 * as) with the bearer token; 401 and 403 there are refusals too. The instance_url is the
 * customer's host (HALOPSA_INSTANCE_URL instead, outside production), so it passes the address
 * guard unless private addresses are allowed.
 */
export async function verifyHalopsa(credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const deadline = Date.now() + settings.timeoutMs;
  const instance = settings.halopsaInstanceUrl ?? credentials.instance_url.replace(/\/+$/, '');
  const options = callOptions(settings, deadline, settings.halopsaInstanceUrl ? 'configured' : 'named');
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: credentials.client_id,
    client_secret: credentials.client_secret,
    scope: 'all',
  });
  const grant = await verificationCall(
    HALOPSA,
    { method: 'POST', url: `${instance}/auth/token`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
    options,
    credentials,
  );
  if (grant.status === 400 || grant.status === 401) throw refused(HALOPSA, halopsaReason(grant), credentials);
  if (!isSuccess(grant)) throw notUsable(HALOPSA, grant, credentials);
  const accessToken = (jsonOf(grant) as { access_token?: unknown } | undefined)?.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') throw unreachable(HALOPSA, 'the token answer had no access_token', credentials);
  const secrets = { ...credentials, access_token: accessToken };
  const me = await verificationCall(
    HALOPSA,
    { method: 'GET', url: `${instance}/api/Agent/me`, headers: { authorization: `Bearer ${accessToken}` } },
    options,
    secrets,
  );
  if (isSuccess(me)) return;
  if (me.status === 401 || me.status === 403) throw refused(HALOPSA, halopsaReason(me), secrets);
  throw notUsable(HALOPSA, me, secrets);
}
