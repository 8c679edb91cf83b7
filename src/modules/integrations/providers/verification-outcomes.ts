import { ApiError } from '../../../common/api-error';
import type { ProviderSettings } from './provider-settings';
import { ProviderCallOptions, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';

/**
 * How every verifier words its outcomes, whatever the provider: refused credentials are 422
 * integration_auth_failed with the provider's reason, no usable answer 502 integration_unreachable;
 * a reason is always cleaned of every credential value first.
 */

const MAX_REASON = 300;

/** The provider's own words, cut short and with every credential value taken out, in case a provider echoes one. */
export function cleanReason(reason: string, credentials: Record<string, string>): string {
  let text = reason.replace(/\s+/g, ' ').trim();
  for (const value of Object.values(credentials)) if (value.length >= 4) text = text.split(value).join('[redacted]');
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text || 'no reason given';
}

/** `provider` is the name a user knows (HubSpot, ConnectWise PSA). */
export const refused = (provider: string, reason: string, credentials: Record<string, string>) =>
  new ApiError('integration_auth_failed', `${provider} refused the credentials: ${cleanReason(reason, credentials)}`, { param: 'credentials' });

export const unreachable = (provider: string, reason: string, credentials: Record<string, string>, retryAfterS?: number) =>
  new ApiError('integration_unreachable', `${provider} could not be reached (${cleanReason(reason, credentials)}); nothing was stored, try again`, {
    retryAfterS,
  });

/** A call whose failure to answer is integration_unreachable. */
export async function verificationCall(
  provider: string,
  request: ProviderRequest,
  options: ProviderCallOptions,
  credentials: Record<string, string>,
): Promise<ProviderResponse> {
  try {
    return await providerRequest(request, options);
  } catch (error) {
    if (error instanceof ProviderUnreachable) throw unreachable(provider, error.message, credentials);
    throw error;
  }
}

/** 5xx, 429 and anything else that is neither success nor a refusal: the provider is not usable now. */
export function notUsable(provider: string, response: ProviderResponse, credentials: Record<string, string>): ApiError {
  if (response.status === 429) return unreachable(provider, 'answered 429, rate limited', credentials, retryAfterOf(response) ?? 10);
  return unreachable(provider, `answered ${response.status}`, credentials);
}

export const isSuccess = (response: ProviderResponse): boolean => response.status >= 200 && response.status < 300;

/**
 * How a verification call to a host is guarded: a host the operator configured (HUBSPOT_API_URL,
 * AUTOTASK_ZONE_URL…) passes the address guard in production only, where it is the real one; a host
 * a customer or a provider named (a ConnectWise site, a HaloPSA instance, an Autotask zone) always
 * does, unless private addresses are allowed (INTEGRATION_ALLOW_PRIVATE_URLS, for local fakes).
 */
export function callOptions(settings: ProviderSettings, deadline: number, host: 'configured' | 'named'): ProviderCallOptions {
  const guard = (host === 'named' || settings.guardConfiguredUrls) && !settings.allowPrivateUrls;
  return { deadline, resolve: settings.resolve, guard };
}
