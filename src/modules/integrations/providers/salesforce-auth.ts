import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';

/** The Salesforce REST API version every call on the instance_url names. */
export const SALESFORCE_API_VERSION = 'v62.0';

/** What the OAuth 2.0 refresh-token grant came to. */
export type SalesforceGrant =
  | { kind: 'granted'; accessToken: string; instanceUrl: string }
  /** 400/401 from the token endpoint: invalid_grant (revoked or expired refresh token), invalid_client, invalid_client_id… */
  | { kind: 'refused'; reason: string }
  /** Anything else that is not a usable grant (5xx, 429, an answer without access_token or instance_url). */
  | { kind: 'unusable'; response: ProviderResponse; reason: string };

/**
 * Salesforce's errors in its own words: {error, error_description} from the token endpoint
 * ("OAuth 2.0 Refresh Token Flow"), [{message, errorCode}] from the REST API ("Status Codes and
 * Error Responses", REST API Developer Guide).
 */
export function salesforceReason(response: ProviderResponse): string {
  const body = jsonOf(response) as Record<string, unknown> | Array<Record<string, unknown>> | undefined;
  const first = Array.isArray(body) ? body[0] : body;
  if (typeof first?.error === 'string') return typeof first.error_description === 'string' ? `${first.error}: ${first.error_description}` : first.error;
  if (typeof first?.message === 'string') return typeof first.errorCode === 'string' ? `${first.errorCode}: ${first.message}` : first.message;
  return `answered ${response.status}`;
}

/**
 * The refresh-token grant ("OAuth 2.0 Refresh Token Flow for Renewed Sessions"): a form POST of
 * grant_type=refresh_token, client_id, client_secret and refresh_token to
 * {loginUrl}/services/oauth2/token.
 */
export function salesforceTokenRequest(credentials: Record<string, string>, loginUrl: string): ProviderRequest {
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    client_id: credentials.client_id,
    client_secret: credentials.client_secret,
    refresh_token: credentials.refresh_token,
  });
  return {
    method: 'POST',
    url: `${loginUrl}/services/oauth2/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  };
}

/**
 * The token endpoint's answer: {access_token, instance_url, …} when granted, 400 {error,
 * error_description} when refused. The instance_url must be a bare origin: every later call is
 * built on it, so anything with a path, query or fragment is refused rather than trusted.
 */
export function readSalesforceGrant(response: ProviderResponse): SalesforceGrant {
  if (response.status === 400 || response.status === 401) return { kind: 'refused', reason: salesforceReason(response) };
  if (response.status !== 200) return { kind: 'unusable', response, reason: `answered ${response.status}` };
  const grant = jsonOf(response) as { access_token?: unknown; instance_url?: unknown } | undefined;
  if (typeof grant?.access_token !== 'string' || typeof grant.instance_url !== 'string' || !/^https?:\/\/[^/?#]+\/?$/i.test(grant.instance_url)) {
    return { kind: 'unusable', response, reason: 'the token answer had no access_token or instance_url' };
  }
  return { kind: 'granted', accessToken: grant.access_token, instanceUrl: grant.instance_url.replace(/\/$/, '') };
}
