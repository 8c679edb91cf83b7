import type { ProviderConfig } from '../../../config';
import type { HostResolver } from '../../../http/address-guard';

/** How the providers are reached: the configured hosts and deadline, how names resolve, and whether configured hosts are guarded too. */
export interface ProviderSettings extends ProviderConfig {
  resolve: HostResolver;
  /** In production the configured hosts are the real ones and pass the address guard like any other; elsewhere they are the operator's choice (a sandbox, a local fake). */
  guardConfiguredUrls: boolean;
}
