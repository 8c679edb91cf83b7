import { jsonOf, ProviderResponse } from './provider-http';
import type { ProviderSettings } from './provider-settings';
import { callOptions, isSuccess, notUsable, refused, unreachable, verificationCall } from './verification-outcomes';

const AUTOTASK = 'Autotask PSA';

/** Autotask's error body ({errors: [..]}, or ASP.NET's {Message}): the errors joined, else the status. */
function autotaskReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { errors?: unknown; message?: unknown; Message?: unknown } | undefined;
  const errors = Array.isArray(body?.errors) ? body.errors.filter((error): error is string => typeof error === 'string') : [];
  if (errors.length) return errors.join('; ');
  const message = body?.message ?? body?.Message;
  return typeof message === 'string' ? message : `answered ${response.status}`;
}

/**
 * The zone's REST base from the zone lookup's answer {zoneName, url, webUrl, ci}: an http(s) URL
 * without query or fragment (every later call is built on it), ending in one slash.
 */
function zoneBaseOf(response: ProviderResponse): string | undefined {
  const zone = jsonOf(response) as { url?: unknown } | undefined;
  if (typeof zone?.url !== 'string' || !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(zone.url)) return undefined;
  return `${zone.url.replace(/\/+$/, '')}/`;
}

/**
 * Autotask PSA (REST API): an API-only user's name and secret and the integration's tracking code.
 * First the zone lookup, `GET {AUTOTASK_ZONE_URL}/atservicesrest/v1.0/zoneInformation?user=…`,
 * which names the zone that holds the user's database (a user it does not know is a 4xx: refused);
 * then the cheapest authenticated call on that zone, `GET {url}v1.0/ThresholdInformation` (the
 * API usage of the last hour), with the `ApiIntegrationCode`, `UserName` and `Secret` headers.
 * 401 and 403 there are refusals. The zone URL comes from the provider, so it passes the address
 * guard unless private addresses are allowed, as Salesforce's instance_url does.
 */
export async function verifyAutotask(credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const deadline = Date.now() + settings.timeoutMs;
  const lookup = await verificationCall(
    AUTOTASK,
    { method: 'GET', url: `${settings.autotaskZoneUrl}/atservicesrest/v1.0/zoneInformation?user=${encodeURIComponent(credentials.username)}` },
    callOptions(settings, deadline, 'configured'),
    credentials,
  );
  if (lookup.status >= 400 && lookup.status < 500 && lookup.status !== 429) throw refused(AUTOTASK, autotaskReason(lookup), credentials);
  if (!isSuccess(lookup)) throw notUsable(AUTOTASK, lookup, credentials);
  const zone = zoneBaseOf(lookup);
  if (!zone) throw unreachable(AUTOTASK, 'the zone answer had no usable url', credentials);
  const threshold = await verificationCall(
    AUTOTASK,
    {
      method: 'GET',
      url: `${zone}v1.0/ThresholdInformation`,
      headers: { ApiIntegrationCode: credentials.integration_code, UserName: credentials.username, Secret: credentials.secret },
    },
    callOptions(settings, deadline, 'named'),
    credentials,
  );
  if (isSuccess(threshold)) return;
  if (threshold.status === 401 || threshold.status === 403) throw refused(AUTOTASK, autotaskReason(threshold), credentials);
  throw notUsable(AUTOTASK, threshold, credentials);
}
