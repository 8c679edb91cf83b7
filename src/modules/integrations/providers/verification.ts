import type { IntegrationProvider } from '../integration.entity';
import { verifyAutotask } from './autotask-verification';
import { verifyConnectwise } from './connectwise-verification';
import type { ProviderSettings } from './provider-settings';
import { verifyCrmCredentials } from './crm-verification';
import { verifyHalopsa } from './halopsa-verification';
import { LLM_VERIFIERS } from './llm-verification';
import { verifyMicrosoft365Credentials } from './m365-verification';
import { verifyPartnerCenter } from './partner-center-verification';

/**
 * Proves a provider's credentials before anything is stored: refused is 422
 * integration_auth_failed (the provider's reason, never a secret), no usable answer 502
 * integration_unreachable. `settings.timeoutMs` bounds all of one verification's calls together.
 * A verifier whose provider replaced a credential while proving it (Partner Center's token
 * endpoint rotates the refresh token) answers the credentials to store instead.
 */
export type CredentialVerifier = (credentials: Record<string, string>, settings: ProviderSettings) => Promise<Record<string, string> | void>;

/** The providers whose credentials are proven on connect; the others are checked for shape only, until they are reached too. */
export const VERIFIERS: Partial<Record<IntegrationProvider, CredentialVerifier>> = {
  hubspot: (credentials, settings) => verifyCrmCredentials('hubspot', credentials, settings),
  salesforce: (credentials, settings) => verifyCrmCredentials('salesforce', credentials, settings),
  connectwise: verifyConnectwise,
  autotask: verifyAutotask,
  halopsa: verifyHalopsa,
  microsoft365: verifyMicrosoft365Credentials,
  partner_center: verifyPartnerCenter,
  ...LLM_VERIFIERS,
};
