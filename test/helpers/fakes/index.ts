import { FakeHubSpot } from './fake-hubspot';
import { FakeMicrosoft } from './fake-microsoft';
import { FakeSalesforce } from './fake-salesforce';

export { FakeHubSpot } from './fake-hubspot';
export { FakeMicrosoft } from './fake-microsoft';
export { FakeSalesforce } from './fake-salesforce';

export interface FakeCrms {
  hubspot: FakeHubSpot;
  salesforce: FakeSalesforce;
  /** Microsoft's login endpoint and Graph, both played by one server. */
  microsoft: FakeMicrosoft;
  /** The configuration that points a service at them (loopback: private addresses allowed). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A loopback HubSpot, Salesforce and Microsoft 365; `acceptAny` for tests that connect them with made-up credentials. */
export async function startFakeCrms(options: { acceptAny?: boolean } = {}): Promise<FakeCrms> {
  const hubspot = await new FakeHubSpot(options).start();
  const salesforce = await new FakeSalesforce(options).start();
  const microsoft = await new FakeMicrosoft(options).start();
  return {
    hubspot,
    salesforce,
    microsoft,
    env: {
      HUBSPOT_API_URL: hubspot.url,
      SALESFORCE_LOGIN_URL: salesforce.url,
      MICROSOFT_LOGIN_URL: microsoft.url,
      MICROSOFT_GRAPH_URL: microsoft.url,
      INTEGRATION_ALLOW_PRIVATE_URLS: 'true',
    },
    close: async () => {
      await Promise.all([hubspot.close(), salesforce.close(), microsoft.close()]);
    },
  };
}
