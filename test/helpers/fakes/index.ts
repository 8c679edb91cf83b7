import { FakeAutotask } from './fake-autotask';
import { FakeChatCompletions } from './fake-chat-completions';
import { FakeConnectWise } from './fake-connectwise';
import { FakeHaloPsa } from './fake-halopsa';
import { FakeHubSpot } from './fake-hubspot';
import { FakeMicrosoft } from './fake-microsoft';
import { FakePartnerCenter } from './fake-partner-center';
import { FakeSalesforce } from './fake-salesforce';

export { FakeAutotask } from './fake-autotask';
export { FakeChatCompletions } from './fake-chat-completions';
export { FakeConnectWise } from './fake-connectwise';
export { FakeHaloPsa } from './fake-halopsa';
export { FakeHubSpot } from './fake-hubspot';
export { FakeMicrosoft } from './fake-microsoft';
export { FakePartnerCenter } from './fake-partner-center';
export { FakeSalesforce } from './fake-salesforce';

export interface FakeCrms {
  hubspot: FakeHubSpot;
  salesforce: FakeSalesforce;
  connectwise: FakeConnectWise;
  autotask: FakeAutotask;
  halopsa: FakeHaloPsa;
  /** Microsoft's login endpoint and Graph, both played by one server. */
  microsoft: FakeMicrosoft;
  /** Partner Center's referrals API; its app+user tokens come from `microsoft`'s refresh-token grant. */
  partnerCenter: FakePartnerCenter;
  /** OpenAI, Azure OpenAI and a compatible model server, played by one Chat Completions server. */
  chat: FakeChatCompletions;
  /** The configuration that points a service at them (loopback: private addresses allowed). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A loopback HubSpot and Salesforce, the PSAs (ConnectWise, Autotask, HaloPSA), Microsoft 365,
 * Partner Center and a Chat Completions model server; `acceptAny` for tests that connect them with made-up credentials. Every
 * ConnectWise site and HaloPSA instance is reached at its fake (CONNECTWISE_SITE_URL, HALOPSA_INSTANCE_URL), whatever
 * host the credentials name, so no test calls a real one.
 */
export async function startFakeCrms(options: { acceptAny?: boolean } = {}): Promise<FakeCrms> {
  const hubspot = await new FakeHubSpot(options).start();
  const salesforce = await new FakeSalesforce(options).start();
  const connectwise = await new FakeConnectWise(options).start();
  const autotask = await new FakeAutotask(options).start();
  const halopsa = await new FakeHaloPsa(options).start();
  const microsoft = await new FakeMicrosoft(options).start();
  const partnerCenter = await new FakePartnerCenter(microsoft, options).start();
  const chat = await new FakeChatCompletions(options).start();
  return {
    hubspot,
    salesforce,
    connectwise,
    autotask,
    halopsa,
    microsoft,
    partnerCenter,
    chat,
    env: {
      HUBSPOT_API_URL: hubspot.url,
      SALESFORCE_LOGIN_URL: salesforce.url,
      AUTOTASK_ZONE_URL: autotask.url,
      CONNECTWISE_SITE_URL: connectwise.url,
      HALOPSA_INSTANCE_URL: halopsa.url,
      MICROSOFT_LOGIN_URL: microsoft.url,
      MICROSOFT_GRAPH_URL: microsoft.url,
      PARTNER_CENTER_API_URL: partnerCenter.url,
      OPENAI_API_URL: `${chat.url}/v1`,
      AZURE_OPENAI_ENDPOINT_URL: chat.url,
      INTEGRATION_ALLOW_PRIVATE_URLS: 'true',
    },
    close: async () => {
      await Promise.all([
        hubspot.close(),
        salesforce.close(),
        connectwise.close(),
        autotask.close(),
        halopsa.close(),
        microsoft.close(),
        partnerCenter.close(),
        chat.close(),
      ]);
    },
  };
}
