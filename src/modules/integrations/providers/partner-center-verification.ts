import type { ProviderSettings } from './provider-settings';
import { PARTNER_CENTER, partnerCenterReason, partnerCenterTokenRequest, readPartnerCenterGrant, referralsUrl } from './partner-center-auth';
import { callOptions, isSuccess, notUsable, refused, unreachable, verificationCall } from './verification-outcomes';

/**
 * Partner Center: an Entra ID app registered in Partner Center and a refresh token of a user with
 * a Referrals role. First the refresh-token grant at the tenant's token endpoint
 * (MICROSOFT_LOGIN_URL; 400/401 refuse: invalid_grant for an expired or revoked refresh token,
 * invalid_client for a wrong secret, AADSTS90002 and AADSTS700016 for an unknown tenant or app),
 * then the cheapest authenticated read of the referrals API, `GET /v1.0/engagements/referrals?$top=1`
 * on PARTNER_CENTER_API_URL ("Get a list of referrals"): 401 and 403 (a user without a Referrals
 * role) refuse too. Both hosts are configured, so both calls take the configured-host guard; they
 * share one deadline.
 *
 * Microsoft's token endpoint answers a new refresh token with each grant: it is what must be
 * stored (the one sent may be spent), so it is returned, to be stored instead.
 */
export async function verifyPartnerCenter(credentials: Record<string, string>, settings: ProviderSettings): Promise<Record<string, string>> {
  const deadline = Date.now() + settings.timeoutMs;
  const options = callOptions(settings, deadline, 'configured');
  const secrets: Record<string, string> = { client_secret: credentials.client_secret, refresh_token: credentials.refresh_token };

  const grant = readPartnerCenterGrant(
    await verificationCall(PARTNER_CENTER, partnerCenterTokenRequest(credentials, settings.microsoftLoginUrl), options, secrets),
  );
  if (grant.kind === 'refused') throw refused(PARTNER_CENTER, grant.reason, secrets);
  if (grant.kind === 'unusable') {
    throw grant.response.status === 200 ? unreachable(PARTNER_CENTER, grant.reason, secrets) : notUsable(PARTNER_CENTER, grant.response, secrets);
  }
  secrets.access_token = grant.accessToken;
  if (grant.refreshToken) secrets.rotated_refresh_token = grant.refreshToken;

  const read = await verificationCall(
    PARTNER_CENTER,
    { method: 'GET', url: referralsUrl(settings.partnerCenterApiUrl, { $top: '1' }), headers: { authorization: `Bearer ${grant.accessToken}` } },
    options,
    secrets,
  );
  if (read.status === 401 || read.status === 403) {
    throw refused(
      PARTNER_CENTER,
      `reading referrals was denied (${partnerCenterReason(read)}); the user needs the Referrals admin or Referrals user role`,
      secrets,
    );
  }
  if (!isSuccess(read)) throw notUsable(PARTNER_CENTER, read, secrets);
  return grant.refreshToken ? { ...credentials, refresh_token: grant.refreshToken } : credentials;
}
