import { FakeHubSpot } from './fake-hubspot';
import { FakeSalesforce } from './fake-salesforce';

export { FakeHubSpot } from './fake-hubspot';
export { FakeSalesforce } from './fake-salesforce';

export interface FakeCrms {
  hubspot: FakeHubSpot;
  salesforce: FakeSalesforce;
  /** The configuration that points a service at them (loopback: private addresses allowed). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A loopback HubSpot and Salesforce; `acceptAny` for tests that connect CRMs with made-up credentials. */
export async function startFakeCrms(options: { acceptAny?: boolean } = {}): Promise<FakeCrms> {
  const hubspot = await new FakeHubSpot(options).start();
  const salesforce = await new FakeSalesforce(options).start();
  return {
    hubspot,
    salesforce,
    env: { HUBSPOT_API_URL: hubspot.url, SALESFORCE_LOGIN_URL: salesforce.url, INTEGRATION_ALLOW_PRIVATE_URLS: 'true' },
    close: async () => {
      await Promise.all([hubspot.close(), salesforce.close()]);
    },
  };
}
