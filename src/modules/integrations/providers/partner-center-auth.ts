import { entraReason } from './m365-verification';
import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';

/**
 * Partner Center's referrals API takes app+user tokens only ("Referrals API authentication";
 * "Partner Center authentication", App+User): an Entra ID app registered in Partner Center redeems
 * a refresh token of a user with the Referrals admin or Referrals user role. The delegated scope
 * of the Partner Center API, and offline_access so each grant answers a refresh token too.
 */
export const PARTNER_CENTER_SCOPE = 'https://api.partner.microsoft.com/user_impersonation offline_access';

/** The product name people know, in every message about it. */
export const PARTNER_CENTER = 'Partner Center';

/**
 * The refresh-token grant of the Microsoft identity platform ("Microsoft identity platform and
 * OAuth 2.0 authorization code flow", Refresh the access token): a form POST of client_id,
 * client_secret, grant_type=refresh_token, refresh_token and scope to
 * {loginUrl}/{tenant}/oauth2/v2.0/token.
 */
export function partnerCenterTokenRequest(credentials: Record<string, string>, loginUrl: string): ProviderRequest {
  const form = new URLSearchParams({
    client_id: credentials.client_id,
    client_secret: credentials.client_secret,
    grant_type: 'refresh_token',
    refresh_token: credentials.refresh_token,
    scope: PARTNER_CENTER_SCOPE,
  });
  return {
    method: 'POST',
    url: `${loginUrl}/${encodeURIComponent(credentials.tenant_id)}/oauth2/v2.0/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  };
}

/** What the refresh-token grant came to. */
export type PartnerCenterGrant =
  /** `refreshToken`: the new refresh token when the endpoint rotated it (it usually does); store it, the next grant needs it. */
  | { kind: 'granted'; accessToken: string; refreshToken: string | null; expiresInS: number }
  /**
   * 400/401: invalid_grant (the refresh token expired, was revoked, or its user lost access:
   * AADSTS70008, AADSTS700082, AADSTS50173), invalid_client (a wrong or expired secret), an unknown
   * tenant or application. The person who connected must give new credentials.
   */
  | { kind: 'refused'; reason: string }
  /** 5xx, 429, or a 200 without an access token: try again later. */
  | { kind: 'unusable'; response: ProviderResponse; reason: string };

/** The token endpoint's answer: {token_type, scope, expires_in, access_token, refresh_token} when granted. */
export function readPartnerCenterGrant(response: ProviderResponse): PartnerCenterGrant {
  if (response.status === 400 || response.status === 401) return { kind: 'refused', reason: entraReason(response) };
  if (response.status !== 200) return { kind: 'unusable', response, reason: `answered ${response.status}` };
  const grant = jsonOf(response) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown } | undefined;
  if (typeof grant?.access_token !== 'string' || grant.access_token === '') {
    return { kind: 'unusable', response, reason: 'the token answer had no access_token' };
  }
  const refreshToken = typeof grant.refresh_token === 'string' && grant.refresh_token !== '' ? grant.refresh_token : null;
  const expiresInS = Number(grant.expires_in);
  return { kind: 'granted', accessToken: grant.access_token, refreshToken, expiresInS: Number.isFinite(expiresInS) && expiresInS > 0 ? expiresInS : 3600 };
}

/**
 * Partner Center's error body ({code, description, data, source}, "Partner Center REST error
 * codes"): code and description, else the status.
 */
export function partnerCenterReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { code?: unknown; description?: unknown; message?: unknown } | undefined;
  const description = typeof body?.description === 'string' ? body.description : typeof body?.message === 'string' ? body.message : undefined;
  const code = typeof body?.code === 'string' || typeof body?.code === 'number' ? String(body.code) : undefined;
  if (code && description) return `${code}: ${description}`;
  return description ?? code ?? `answered ${response.status}`;
}

/** GET /v1.0/engagements/referrals with OData options: the list the verifier and the worker read. */
export function referralsUrl(apiUrl: string, query: Record<string, string>): string {
  // OData's $ options stay as written; only their values are encoded.
  const options = Object.entries(query).map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
  return `${apiUrl}/v1.0/engagements/referrals${options.length ? `?${options.join('&')}` : ''}`;
}
