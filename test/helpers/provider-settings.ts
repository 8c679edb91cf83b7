import type { ProviderSettings } from '../../src/modules/integrations/providers/provider-settings';
import { systemResolver } from '../../src/http/address-guard';

/** A port nothing listens on: a provider a test does not use is never reached by accident. */
const UNUSED = 'http://127.0.0.1:9';

/**
 * Provider settings for a client test: every provider's URL unused but the ones given (the fake
 * under test), private addresses allowed (the fakes are on loopback), and a deadline per call.
 */
export function providerSettings(urls: Partial<ProviderSettings>, timeoutMs = 5_000): ProviderSettings {
  return {
    hubspotApiUrl: UNUSED,
    salesforceLoginUrl: UNUSED,
    microsoftLoginUrl: UNUSED,
    microsoftGraphUrl: UNUSED,
    autotaskZoneUrl: UNUSED,
    partnerCenterApiUrl: UNUSED,
    openaiApiUrl: UNUSED,
    timeoutMs,
    llmTimeoutMs: timeoutMs,
    allowPrivateUrls: true,
    guardConfiguredUrls: false,
    resolve: systemResolver,
    ...urls,
  };
}
