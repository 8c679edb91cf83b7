import { ApiError } from '../../../common/api-error';
import { ProviderCallOptions, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';

/**
 * What every verifier answers when a provider says no or says nothing useful, named by the
 * provider's display name ("HubSpot", "Microsoft 365"): refused is 422 integration_auth_failed
 * with the provider's reason, no usable answer 502 integration_unreachable. Reasons pass through
 * cleanReason first, so no secret the provider echoes reaches a response.
 */

const MAX_REASON = 300;

/** The provider's own words, cut short and with every given value taken out, in case a provider echoes one. */
export function cleanReason(reason: string, secrets: Record<string, string>): string {
  let text = reason.replace(/\s+/g, ' ').trim();
  for (const value of Object.values(secrets)) if (value.length >= 4) text = text.split(value).join('[redacted]');
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text || 'no reason given';
}

export const refusedBy = (provider: string, reason: string, secrets: Record<string, string>): ApiError =>
  new ApiError('integration_auth_failed', `${provider} refused the credentials: ${cleanReason(reason, secrets)}`, { param: 'credentials' });

export const unreachableFrom = (provider: string, reason: string, secrets: Record<string, string>, retryAfterS?: number): ApiError =>
  new ApiError('integration_unreachable', `${provider} could not be reached (${cleanReason(reason, secrets)}); nothing was stored, try again`, {
    retryAfterS,
  });

/** A call whose failure to answer is integration_unreachable. */
export async function verificationCall(
  provider: string,
  request: ProviderRequest,
  options: ProviderCallOptions,
  secrets: Record<string, string>,
): Promise<ProviderResponse> {
  try {
    return await providerRequest(request, options);
  } catch (error) {
    if (error instanceof ProviderUnreachable) throw unreachableFrom(provider, error.message, secrets);
    throw error;
  }
}

/** 5xx, 429 and anything else that is neither success nor a refusal: the provider is not usable now. */
export function notUsable(provider: string, response: ProviderResponse, secrets: Record<string, string>): ApiError {
  if (response.status === 429) return unreachableFrom(provider, 'answered 429, rate limited', secrets, retryAfterOf(response) ?? 10);
  return unreachableFrom(provider, `answered ${response.status}`, secrets);
}
