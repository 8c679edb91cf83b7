import { randomUUID } from 'node:crypto';
import { decryptJson } from '../../src/common/crypto';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TEST_ENCRYPTION_KEY_HEX, TestAccount, TestApp } from '../helpers/app';
import { FakeCrms, startFakeCrms } from '../helpers/fakes';
import { bearerOf, SeenRequest } from '../helpers/fakes/fake-provider';
import { closedPort, expectRefused, SecretLedger, storedFor } from '../helpers/verification';
import { waitFor } from '../helpers/wait';

/**
 * Co-sell that reaches Partner Center (issue 22): a partner_center integration is proven on
 * connect (the refresh-token grant at Microsoft's login endpoint, then one read of the referrals
 * API), and a live registration becomes a Partner Center referral, made by the co-sell worker in
 * the background and followed until it is final. Microsoft's login endpoint and Partner Center are
 * the loopback fakes of test/helpers/fakes (FakeMicrosoft, FakePartnerCenter), played as
 * Microsoft's documents describe them; our service, database and worker are the real ones.
 */

const ledger = new SecretLedger();
const KEY = Buffer.from(TEST_ENCRYPTION_KEY_HEX, 'hex');
const REFERRALS = '/v1.0/engagements/referrals';

interface PartnerCenterCredentials {
  tenant_id: string;
  client_id: string;
  client_secret: string;
  refresh_token: string;
}

interface CoSell {
  id: string;
  status: string;
  submitted_at: string;
  decided_at: string | null;
  integration_id: string;
  referral_id: string | null;
  status_reason: string | null;
}

let users = 0;

describe('co-sell through Partner Center', () => {
  let crms: FakeCrms;
  let app: TestApp;
  let account: TestAccount;
  const logStream = ledger.logStream;

  const api = async (method: string, path: string, body?: unknown, key: string = account.liveKey, target: TestApp = app): Promise<HttpResponse> => {
    const res = await target.request(method, path, { key, body });
    ledger.responses.push(res.text);
    return res;
  };

  /**
   * A Partner Center app registration and a user with a Referrals role who consented to it once:
   * the credentials a partner gives us (the refresh token is the user's).
   */
  function partnerCenterUser(roles: Array<'Referrals admin' | 'Referrals user'> = ['Referrals admin']) {
    const credentials: PartnerCenterCredentials = {
      tenant_id: randomUUID(),
      client_id: randomUUID(),
      client_secret: ledger.secret('pc~Q8'),
      refresh_token: '',
    };
    const userPrincipalName = `referrals-${++users}@contoso.onmicrosoft.com`;
    crms.microsoft.registerApp({ tenantId: credentials.tenant_id, clientId: credentials.client_id, clientSecret: credentials.client_secret });
    crms.partnerCenter.setRoles(userPrincipalName, roles);
    credentials.refresh_token = crms.microsoft.grantRefreshToken({ tenantId: credentials.tenant_id, clientId: credentials.client_id, userPrincipalName });
    ledger.secrets.add(credentials.refresh_token);
    return { credentials, userPrincipalName };
  }

  const connectBody = (credentials: Partial<PartnerCenterCredentials>) => ({ type: 'm365', provider: 'partner_center', credentials });

  async function connected(credentials: PartnerCenterCredentials, who: TestAccount = account): Promise<string> {
    const res = await api('POST', '/v1/integrations', connectBody(credentials), who.liveKey);
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** A live lead and deal with everything a referral needs; `deal` fields override. */
  async function eligibleDeal(deal: Record<string, unknown> = {}, who: TestAccount = account, lead: Record<string, unknown> = {}) {
    const madeLead = await api(
      'POST',
      '/v1/leads',
      { company: 'Fabrikam Ltd', contact_email: `ada-${randomUUID()}@fabrikam.test`, contact_name: 'Ada Lovelace', country: 'GB', ...lead },
      who.liveKey,
    );
    expect(madeLead.status).toBe(201);
    const made = await api(
      'POST',
      '/v1/deals',
      {
        name: 'Fabrikam rollout',
        value: 25000.5,
        currency: 'EUR',
        stage: 'qualification',
        lead_id: madeLead.body.id,
        expected_close_date: '2099-06-30',
        ...deal,
      },
      who.liveKey,
    );
    expect(made.status).toBe(201);
    return { lead: madeLead.body, deal: made.body };
  }

  const register = (dealId: string, key: string = account.liveKey) => api('POST', `/v1/deals/${dealId}/register`, undefined, key);
  const coSellOf = async (dealId: string, key: string = account.liveKey): Promise<CoSell> =>
    (await api('GET', `/v1/deals/${dealId}`, undefined, key)).body.co_sell;
  const eventsOf = async (type: string, dealId: string, key: string = account.liveKey) =>
    (
      (await api('GET', `/v1/events?type=${type}&limit=100`, undefined, key)).body.data as Array<{
        data: { object: { id: string; co_sell: CoSell }; previous_attributes: Record<string, unknown> };
      }>
    )
      .filter((event) => event.data.object.id === dealId)
      .reverse();
  const referralIdOf = (dealId: string): Promise<string> => waitFor(`the referral of ${dealId}`, async () => (await coSellOf(dealId)).referral_id ?? undefined);
  const statusOf = (dealId: string, status: string) =>
    waitFor(`co_sell.status ${status} for ${dealId}`, async () => {
      const coSell = await coSellOf(dealId);
      return coSell.status === status ? coSell : undefined;
    });
  const creates = (tenantId?: string) =>
    crms.partnerCenter.seen(REFERRALS).filter((call) => call.method === 'POST' && (!tenantId || tenantOfCall(call) === tenantId));
  /** The tenant an app+user token was issued in (the fake knows every token it issued). */
  const tenantOfCall = (call: SeenRequest) => crms.microsoft.delegatedToken(bearerOf(call) ?? '')?.tenantId;
  /** Waits until Partner Center has answered `count` more reads of the referral: the worker has looked that many times since. */
  const readsOf = (referralId: string) => crms.partnerCenter.seen(`${REFERRALS}/${referralId}`).length;
  const moreReads = async (referralId: string, count: number) => {
    const from = readsOf(referralId);
    await waitFor(`${count} more reads of ${referralId}`, () => readsOf(referralId) >= from + count);
  };
  const syncRows = async (dealId: string) =>
    app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ id: string; integration_id: string; failures: number }>>('select * from co_sell_syncs where deal_id = ?', [dealId]);
  const integrationOf = async (id: string) => (await api('GET', `/v1/integrations/${id}`)).body;

  beforeAll(async () => {
    crms = await startFakeCrms();
    app = await startTestApp({
      crms,
      env: { LOG_LEVEL: 'info', CO_SELL_POLL_INTERVAL_MS: '200' },
      logStream,
      coSell: {},
      operationLimits: {
        ...OPERATION_LIMITS,
        connectIntegration: { windowS: 60, max: 1_000_000 },
        registerDeal: { windowS: 60, max: 1_000_000 },
      },
    });
  });
  beforeEach(async () => {
    await app.reset();
    crms.partnerCenter.recover();
    crms.microsoft.recover();
    account = await app.createAccount();
  });
  afterAll(async () => {
    await app.close();
    await crms.close();
  });

  describe('connecting', () => {
    it('redeems the refresh token at the tenant, reads the referrals once with the token, and stores the rotated refresh token', async () => {
      const { credentials, userPrincipalName } = partnerCenterUser();
      const res = await api('POST', '/v1/integrations', connectBody(credentials));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        object: 'integration',
        type: 'm365',
        provider: 'partner_center',
        status: 'connected',
        livemode: true,
        credentials_hint: credentials.client_secret.slice(-4),
      });

      const grants = crms.microsoft.seen(`/${credentials.tenant_id}/oauth2/v2.0/token`);
      expect(grants).toHaveLength(1);
      expect(grants[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(grants[0].body))).toEqual({
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        grant_type: 'refresh_token',
        refresh_token: credentials.refresh_token,
        scope: 'https://api.partner.microsoft.com/user_impersonation offline_access',
      });
      const reads = crms.partnerCenter.seen(REFERRALS).filter((call) => tenantOfCall(call) === credentials.tenant_id);
      expect(reads.map((call) => [call.method, decodeURIComponent(call.path)])).toEqual([['GET', `${REFERRALS}?$top=1`]]);
      expect(tenantOfCall(reads[0])).toBe(credentials.tenant_id);

      // The token endpoint answered a new refresh token and spent the one sent: the new one is stored, encrypted.
      const [rotated] = crms.microsoft.liveRefreshTokens(userPrincipalName);
      expect(rotated).toBeDefined();
      expect(rotated).not.toBe(credentials.refresh_token);
      ledger.secrets.add(rotated);
      const [row] = await app.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ credentials_encrypted: string }>>('select credentials_encrypted from integrations where id = ?', [res.body.id]);
      expect(row.credentials_encrypted).not.toContain(rotated);
      expect(decryptJson(row.credentials_encrypted, KEY)).toEqual({ ...credentials, refresh_token: rotated });
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 1, events: 1 });

      // Beside Microsoft 365, under the same type.
      const types = await api('GET', '/v1/integrations?type=m365');
      expect(types.body.data.map((integration: { provider: string }) => integration.provider)).toEqual(['partner_center']);
    });

    it("refuses a wrong secret, a revoked or spent refresh token, and a user without a Referrals role, in Microsoft's words, storing nothing", async () => {
      const { credentials, userPrincipalName } = partnerCenterUser();
      const wrongSecret = expectRefused(
        await api('POST', '/v1/integrations', connectBody({ ...credentials, client_secret: ledger.secret('wrong~Q8') })),
        422,
        'integration_auth_failed',
      );
      expect(wrongSecret).toMatch(/^Partner Center refused the credentials: invalid_client: AADSTS7000215: Invalid client secret provided\./);

      const unknownToken = expectRefused(
        await api('POST', '/v1/integrations', connectBody({ ...credentials, refresh_token: ledger.secret('0.AXmadeup') })),
        422,
        'integration_auth_failed',
      );
      expect(unknownToken).toBe('Partner Center refused the credentials: invalid_grant: AADSTS9002313: Invalid request. Request is malformed or invalid.');

      const noRole = partnerCenterUser([]);
      const denied = expectRefused(await api('POST', '/v1/integrations', connectBody(noRole.credentials)), 422, 'integration_auth_failed');
      expect(denied).toBe(
        'Partner Center refused the credentials: reading referrals was denied (Forbidden: The user does not have a Referrals admin or Referrals user role.); ' +
          'the user needs the Referrals admin or Referrals user role',
      );
      // That grant went through: the refresh token sent is spent, and a second try with it is refused as such.
      const spent = expectRefused(await api('POST', '/v1/integrations', connectBody(noRole.credentials)), 422, 'integration_auth_failed');
      expect(spent).toMatch(/^Partner Center refused the credentials: invalid_grant: AADSTS50173: The provided grant has expired due to it being revoked/);

      crms.microsoft.revokeUserGrants(userPrincipalName);
      const revoked = expectRefused(await api('POST', '/v1/integrations', connectBody(credentials)), 422, 'integration_auth_failed');
      expect(revoked).toMatch(/invalid_grant: AADSTS50173/);
      for (const message of [wrongSecret, unknownToken, denied, spent, revoked]) {
        expect(message).not.toMatch(/Trace ID|Correlation ID/);
        expect(message).not.toContain(credentials.client_secret);
        expect(message).not.toContain(credentials.refresh_token);
      }
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });

    it('answers 502 integration_unreachable when Partner Center fails, rate-limits or is not there, storing nothing', async () => {
      crms.partnerCenter.fail(503);
      const failing = expectRefused(await api('POST', '/v1/integrations', connectBody(partnerCenterUser().credentials)), 502, 'integration_unreachable');
      expect(failing).toBe('Partner Center could not be reached (answered 503); nothing was stored, try again');
      crms.partnerCenter.rateLimit(7);
      const limited = await api('POST', '/v1/integrations', connectBody(partnerCenterUser().credentials));
      expect(expectRefused(limited, 502, 'integration_unreachable')).toMatch(/429/);
      expect(limited.headers.get('retry-after')).toBe('7');
      crms.partnerCenter.recover();

      const port = await closedPort();
      const nowhere = await startTestApp({ crms, env: { PARTNER_CENTER_API_URL: `http://127.0.0.1:${port}` }, logStream });
      try {
        const closed = expectRefused(
          await api('POST', '/v1/integrations', connectBody(partnerCenterUser().credentials), account.liveKey, nowhere),
          502,
          'integration_unreachable',
        );
        expect(closed).toMatch(/^Partner Center could not be reached \(ECONNREFUSED\); nothing was stored/);
      } finally {
        await nowhere.close();
      }
      expect(await storedFor(app, account.account.id)).toEqual({ integrations: 0, events: 0 });
    });
  });

  describe('a live registration', () => {
    it('answers submitted at once; the worker then creates one Shared referral with what Partner Center requires, and stores its id', async () => {
      const { credentials } = partnerCenterUser();
      const integrationId = await connected(credentials);
      const { lead, deal } = await eligibleDeal();
      const res = await register(deal.id);
      expect(res.status).toBe(200);
      expect(res.body.co_sell).toMatchObject({ status: 'submitted', decided_at: null, integration_id: integrationId, referral_id: null, status_reason: null });
      const registration = res.body.co_sell as CoSell;

      const referralId = await referralIdOf(deal.id);
      const referrals = crms.partnerCenter.of(credentials.tenant_id);
      expect(referrals).toHaveLength(1);
      expect(referrals[0]).toMatchObject({
        id: referralId,
        name: 'Fabrikam rollout',
        type: 'Shared',
        externalReferenceId: registration.id,
        status: 'New',
        substatus: 'Pending',
        customerProfile: {
          name: 'Fabrikam Ltd',
          address: { country: 'GB' },
          team: [{ firstName: 'Ada', lastName: 'Lovelace', email: lead.contact_email }],
        },
        consent: { consentToToShareInfoWithOthers: true, consentToContact: true, consentToShareReferralWithMicrosoftSellers: true },
        details: { dealValue: 25000.5, currency: 'EUR', closingDateTime: '2099-06-30T00:00:00Z' },
      });
      // Looked for an earlier attempt's referral first, then created it once, with the partner's app+user token.
      const calls = crms.partnerCenter.seen(REFERRALS).filter((call) => tenantOfCall(call) === credentials.tenant_id && call.path !== `${REFERRALS}?$top=1`);
      expect(calls.map((call) => [call.method, decodeURIComponent(call.path)])).toEqual([
        ['GET', `${REFERRALS}?$filter=externalReferenceId eq '${registration.id}'`],
        ['POST', REFERRALS],
      ]);
      expect(calls[1].headers['content-type']).toBe('application/json');
      expect(tenantOfCall(calls[1])).toBe(credentials.tenant_id);

      const coSell = await coSellOf(deal.id);
      expect(coSell).toEqual({ ...registration, referral_id: referralId });
      const gql = await app.graphql(
        'query ($id: ID!) { deal(id: $id) { coSell { id status referralId statusReason integrationId } } }',
        { id: deal.id },
        account.liveKey,
      );
      expect(gql.body.data.deal.coSell).toEqual({ id: registration.id, status: 'submitted', referralId, statusReason: null, integrationId });
      // The referral id arriving is a change of co_sell: one deal.co_sell_updated, with deal.updated.
      const updates = await eventsOf('deal.co_sell_updated', deal.id);
      expect(updates).toHaveLength(1);
      expect(updates[0].data.previous_attributes).toEqual({ co_sell: { ...registration } });
      expect(await eventsOf('deal.updated', deal.id)).toHaveLength(2);
      expect(await eventsOf('deal.registered', deal.id)).toHaveLength(1);
      expect((await integrationOf(integrationId)).last_synced_at).not.toBeNull();
    });

    it("follows the referral's status: accepted, then won, one deal.co_sell_updated per change and none when nothing changed", async () => {
      await connected(partnerCenterUser().credentials);
      const { deal } = await eligibleDeal();
      const registration = (await register(deal.id)).body.co_sell as CoSell;
      const referralId = await referralIdOf(deal.id);

      // New/Received is still submitted: read again and again, nothing written.
      crms.partnerCenter.move(referralId, 'New', 'Received');
      await moreReads(referralId, 3);
      expect(await eventsOf('deal.co_sell_updated', deal.id)).toHaveLength(1);
      expect((await coSellOf(deal.id)).status).toBe('submitted');

      crms.partnerCenter.move(referralId, 'Active', 'Accepted');
      const accepted = await statusOf(deal.id, 'accepted');
      expect(accepted.decided_at).not.toBeNull();
      expect(Date.parse(accepted.decided_at!)).toBeGreaterThanOrEqual(Date.parse(registration.submitted_at));
      await moreReads(referralId, 3);

      crms.partnerCenter.move(referralId, 'Closed', 'Won', 'Customer signed with Microsoft and Contoso');
      const won = await statusOf(deal.id, 'won');
      expect(won).toEqual({ ...accepted, status: 'won', status_reason: 'Customer signed with Microsoft and Contoso' });

      const updates = await eventsOf('deal.co_sell_updated', deal.id);
      expect(updates.map((event) => [event.data.object.co_sell.status, event.data.object.co_sell.referral_id])).toEqual([
        ['submitted', referralId],
        ['accepted', referralId],
        ['won', referralId],
      ]);
      expect(updates[1].data.previous_attributes).toEqual({ co_sell: { ...registration, referral_id: referralId } });
      expect(await eventsOf('deal.updated', deal.id)).toHaveLength(4);
      // Won is final: the worker stops reading it.
      await waitFor('the sync row to go', async () => (await syncRows(deal.id)).length === 0);
      const reads = readsOf(referralId);
      const other = await eligibleDeal();
      await register(other.deal.id);
      const otherReferral = await referralIdOf(other.deal.id);
      await moreReads(otherReferral, 2);
      expect(readsOf(referralId)).toBe(reads);
    });

    it('ends as expired, or as rejected with the reason, when Partner Center closes the referral so', async () => {
      await connected(partnerCenterUser().credentials);
      const first = await eligibleDeal();
      const second = await eligibleDeal({ name: 'Second' });
      await register(first.deal.id);
      await register(second.deal.id);
      const expiring = await referralIdOf(first.deal.id);
      const declining = await referralIdOf(second.deal.id);
      crms.partnerCenter.move(expiring, 'Closed', 'Expired');
      crms.partnerCenter.move(declining, 'Closed', 'Declined', 'Customer has chosen another vendor');
      expect(await statusOf(first.deal.id, 'expired')).toMatchObject({ status_reason: null, decided_at: expect.any(String) });
      expect(await statusOf(second.deal.id, 'rejected')).toMatchObject({ status_reason: 'Customer has chosen another vendor' });
      for (const { deal } of [first, second]) {
        expect(await eventsOf('deal.co_sell_updated', deal.id)).toHaveLength(2);
        await waitFor('the sync row to go', async () => (await syncRows(deal.id)).length === 0);
      }
      // The filter lists them by their new statuses.
      const listed = await api('GET', '/v1/deals?co_sell_status=expired');
      expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([first.deal.id]);
    });

    it("ends as rejected, with Partner Center's reason, when Partner Center refuses the referral (400)", async () => {
      const { credentials } = partnerCenterUser();
      const integrationId = await connected(credentials);
      // Eligible here, but Partner Center refuses a closing date in the past.
      const { deal } = await eligibleDeal({ expected_close_date: '2020-01-31' });
      expect((await register(deal.id)).status).toBe(200);
      const rejected = await statusOf(deal.id, 'rejected');
      expect(rejected).toMatchObject({
        referral_id: null,
        status_reason: 'Partner Center refused the referral: BadRequest: The Details.ClosingDateTime must not be in the past.',
        decided_at: expect.any(String),
      });
      expect(crms.partnerCenter.of(credentials.tenant_id)).toEqual([]);
      expect(creates(credentials.tenant_id)).toHaveLength(1);
      expect(await eventsOf('deal.co_sell_updated', deal.id)).toHaveLength(1);
      await waitFor('the sync row to go', async () => (await syncRows(deal.id)).length === 0);
      // Partner Center answered: the integration is fine.
      expect((await integrationOf(integrationId)).status).toBe('connected');
    });

    it('backs off on 429 (Retry-After) and 5xx and then creates exactly one referral', async () => {
      const { credentials } = partnerCenterUser();
      await connected(credentials);
      crms.partnerCenter.rateLimit(1);
      const { deal } = await eligibleDeal();
      const registration = (await register(deal.id)).body.co_sell as CoSell;
      // The worker's attempts for this registration: each starts by looking for the referral by its id.
      const attempts = () => crms.partnerCenter.seen(REFERRALS).filter((call) => call.path.includes(registration.id)).length;
      await waitFor('two attempts refused with 429', () => attempts() >= 2);
      crms.partnerCenter.fail(503);
      const refusedSoFar = attempts();
      await waitFor('an attempt answered 503', () => attempts() > refusedSoFar);
      expect((await coSellOf(deal.id)).referral_id).toBeNull();
      const [row] = await syncRows(deal.id);
      expect(row.failures).toBeGreaterThanOrEqual(2);
      crms.partnerCenter.recover();
      const referralId = await referralIdOf(deal.id);
      expect(crms.partnerCenter.of(credentials.tenant_id).map((referral) => referral.id)).toEqual([referralId]);
      expect(creates(credentials.tenant_id)).toHaveLength(1);
      await waitFor('the failures to reset', async () => (await syncRows(deal.id))[0]?.failures === 0);
    });

    it('never makes a second referral after a crash between creating it and storing its id', async () => {
      const { credentials } = partnerCenterUser();
      await connected(credentials);
      // Partner Center creates the referral, and the connection is cut before its answer: the worker never learns the id.
      crms.partnerCenter.hangUpAfterCreates(1);
      const { deal } = await eligibleDeal();
      const registration = (await register(deal.id)).body.co_sell as CoSell;
      const referralId = await referralIdOf(deal.id);
      expect(creates(credentials.tenant_id)).toHaveLength(1);
      expect(crms.partnerCenter.of(credentials.tenant_id).map((referral) => [referral.id, referral.externalReferenceId])).toEqual([
        [referralId, registration.id],
      ]);

      // The same window, the other way: the process died after the create, before the id was stored. The worker stops
      // (as a dead process does), the id is not there, and a worker starts again.
      await app.coSellWorker!.stop();
      await app.orm.em.fork().getConnection().execute('update deals set co_sell_referral_id = null where id = ?', [deal.id]);
      expect((await coSellOf(deal.id)).referral_id).toBeNull();
      const searchesFor = () => crms.partnerCenter.seen(REFERRALS).filter((call) => call.method === 'GET' && call.path.includes(registration.id)).length;
      const searches = searchesFor();
      app.coSellWorker!.start();
      expect(await referralIdOf(deal.id)).toBe(referralId);
      // It looked for the referral by our registration id, found it, and made none.
      expect(searchesFor()).toBe(searches + 1);
      expect(creates(credentials.tenant_id)).toHaveLength(1);
      expect(crms.partnerCenter.of(credentials.tenant_id)).toHaveLength(1);
    });

    it('a refused user moves the integration to error; the registration goes through once Partner Center accepts again', async () => {
      const { credentials, userPrincipalName } = partnerCenterUser();
      const integrationId = await connected(credentials);
      // The user loses the Referrals role: Partner Center answers 403 to the worker.
      crms.partnerCenter.setRoles(userPrincipalName, []);
      const { deal } = await eligibleDeal();
      await register(deal.id);
      const failed = await waitFor('the integration in error', async () => {
        const integration = await integrationOf(integrationId);
        return integration.status === 'error' ? integration : undefined;
      });
      expect(failed.last_error).toBe('Partner Center refused listing referrals: Forbidden: The user does not have a Referrals admin or Referrals user role.');
      expect((await coSellOf(deal.id)).status).toBe('submitted');
      // Registering another deal now is refused: the integration is not connected.
      const blocked = await eligibleDeal({ name: 'Blocked' });
      const refusal = await register(blocked.deal.id);
      expect(refusal.status).toBe(422);
      expect(refusal.body.error.reasons.map((reason: { rule: string }) => reason.rule)).toEqual(['partner_center_integration']);

      crms.partnerCenter.setRoles(userPrincipalName, ['Referrals admin']);
      const referralId = await referralIdOf(deal.id);
      expect(crms.partnerCenter.of(credentials.tenant_id).map((referral) => referral.id)).toEqual([referralId]);
      const recovered = await integrationOf(integrationId);
      expect(recovered).toMatchObject({ status: 'connected', last_error: failed.last_error });
      expect((await api('GET', '/v1/events?type=integration.error')).body.data).toHaveLength(1);
    });

    it('a revoked refresh token moves the integration to error; connecting again with new credentials carries the registration on', async () => {
      const { credentials, userPrincipalName } = partnerCenterUser();
      const integrationId = await connected(credentials);
      crms.microsoft.revokeUserGrants(userPrincipalName);
      const { deal } = await eligibleDeal();
      await register(deal.id);
      const failed = await waitFor('the integration in error', async () => {
        const integration = await integrationOf(integrationId);
        return integration.status === 'error' ? integration : undefined;
      });
      expect(failed.last_error).toMatch(/^Partner Center refused the credentials: invalid_grant: AADSTS50173/);

      // The user consents again: the partner disconnects and connects with the new refresh token.
      expect((await api('DELETE', `/v1/integrations/${integrationId}`)).status).toBe(200);
      const fresh = crms.microsoft.grantRefreshToken({ tenantId: credentials.tenant_id, clientId: credentials.client_id, userPrincipalName });
      ledger.secrets.add(fresh);
      const successor = await connected({ ...credentials, refresh_token: fresh });
      const referralId = await referralIdOf(deal.id);
      expect(await coSellOf(deal.id)).toMatchObject({ integration_id: successor, referral_id: referralId, status: 'submitted' });
      expect(crms.partnerCenter.of(credentials.tenant_id)).toHaveLength(1);
      expect((await syncRows(deal.id))[0].integration_id).toBe(successor);
    });
  });

  describe('eligibility', () => {
    it('in live mode, 422 names every field Partner Center requires that the deal lacks, and the integration; the eligibility route answers the same', async () => {
      const { deal, lead } = await eligibleDeal({ expected_close_date: null }, account, { contact_name: 'Cher', country: 'Atlantis' });
      const refused = await register(deal.id);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('deal_not_eligible');
      const reasons = refused.body.error.reasons as Array<{ rule: string; message: string }>;
      expect(reasons.map((reason) => reason.rule)).toEqual(['partner_center_integration', 'expected_close_date', 'contact_name', 'country']);
      for (const reason of reasons) expect(refused.body.error.message).toContain(reason.message);

      const asked = await api('GET', `/v1/deals/${deal.id}/co_sell_eligibility`);
      expect(asked.body).toEqual({ object: 'co_sell_eligibility', deal_id: deal.id, eligible: false, reasons, registered: false });
      const gql = await app.graphql('mutation ($id: ID!) { registerDeal(id: $id) { id } }', { id: deal.id }, account.liveKey);
      expect(gql.body.errors[0].extensions).toMatchObject({ errorCode: 'deal_not_eligible', reasons });

      // Each fix takes its reason away.
      const pc = partnerCenterUser();
      await connected(pc.credentials);
      expect((await api('PUT', `/v1/leads/${lead.id}`, { contact_name: 'Cher Sarkisian', country: 'us' })).status).toBe(200);
      expect((await api('GET', `/v1/deals/${deal.id}/co_sell_eligibility`)).body.reasons.map((reason: { rule: string }) => reason.rule)).toEqual([
        'expected_close_date',
      ]);
      expect((await api('PUT', `/v1/deals/${deal.id}`, { expected_close_date: '2099-12-31' })).status).toBe(200);
      expect((await api('GET', `/v1/deals/${deal.id}/co_sell_eligibility`)).body).toMatchObject({ eligible: true, reasons: [] });
      // Nothing reached Partner Center for the refused registrations: only the connect's one read.
      expect(
        crms.partnerCenter.requests.filter((call) => tenantOfCall(call) === pc.credentials.tenant_id).map((call) => decodeURIComponent(call.path)),
      ).toEqual([`${REFERRALS}?$top=1`]);
      expect((await register(deal.id)).status).toBe(200);
      await referralIdOf(deal.id);
    });

    it('test mode accepts at once, through Microsoft 365, and Partner Center never hears of it', async () => {
      const m365 = { tenant_id: randomUUID(), client_id: randomUUID(), client_secret: ledger.secret('m365~Q8'), mailbox: 'sales@contoso.onmicrosoft.com' };
      crms.microsoft.registerApp({ tenantId: m365.tenant_id, clientId: m365.client_id, clientSecret: m365.client_secret });
      crms.microsoft.addMailbox(m365.tenant_id, m365.mailbox);
      const m365Id = (await api('POST', '/v1/integrations', { type: 'm365', provider: 'microsoft365', credentials: m365 }, account.testKey)).body.id;
      // A test-mode Partner Center integration changes nothing: test mode has no partner program behind it.
      const pc = partnerCenterUser();
      expect((await api('POST', '/v1/integrations', connectBody(pc.credentials), account.testKey)).status).toBe(201);
      const sent = () => crms.partnerCenter.requests.filter((call) => tenantOfCall(call) === pc.credentials.tenant_id).length;
      expect(sent()).toBe(1);
      const lead = (await api('POST', '/v1/leads', { company: 'Test Co', contact_email: `t-${randomUUID()}@test.example` }, account.testKey)).body;
      const deal = (await api('POST', '/v1/deals', { name: 'Test', value: 1000, stage: 'proposal', lead_id: lead.id }, account.testKey)).body;
      const res = await register(deal.id, account.testKey);
      expect(res.status).toBe(200);
      expect(res.body.co_sell).toMatchObject({
        status: 'accepted',
        integration_id: m365Id,
        referral_id: null,
        status_reason: null,
        decided_at: expect.any(String),
      });
      // Nothing is owed to the worker, so nothing will ever be sent.
      expect(await syncRows(deal.id)).toEqual([]);
      expect(sent()).toBe(1);
      expect(await eventsOf('deal.co_sell_updated', deal.id, account.testKey)).toEqual([]);
    });
  });

  it("keeps accounts apart: each account's registration goes through its own integration, to its own Partner Center tenant", async () => {
    const other = await app.createAccount();
    const mine = partnerCenterUser();
    const theirs = partnerCenterUser();
    const myIntegration = await connected(mine.credentials);
    const theirIntegration = await connected(theirs.credentials, other);
    const { deal: myDeal } = await eligibleDeal();
    const { deal: theirDeal } = await eligibleDeal({ name: 'Theirs' }, other);
    const myRegistration = (await register(myDeal.id)).body.co_sell as CoSell;
    const theirRegistration = (await register(theirDeal.id, other.liveKey)).body.co_sell as CoSell;
    expect([myRegistration.integration_id, theirRegistration.integration_id]).toEqual([myIntegration, theirIntegration]);
    await referralIdOf(myDeal.id);
    await waitFor('their referral', async () => (await coSellOf(theirDeal.id, other.liveKey)).referral_id);
    expect(crms.partnerCenter.of(mine.credentials.tenant_id).map((referral) => referral.externalReferenceId)).toEqual([myRegistration.id]);
    expect(crms.partnerCenter.of(theirs.credentials.tenant_id).map((referral) => referral.externalReferenceId)).toEqual([theirRegistration.id]);
    expect(creates(mine.credentials.tenant_id)).toHaveLength(1);
    expect(creates(theirs.credentials.tenant_id)).toHaveLength(1);
    // Neither sees the other's deal, nor its events, nor can register it.
    expect((await api('GET', `/v1/deals/${theirDeal.id}`)).status).toBe(404);
    expect((await api('GET', `/v1/deals/${theirDeal.id}/co_sell_eligibility`)).status).toBe(404);
    expect((await register(theirDeal.id)).status).toBe(404);
    expect(await eventsOf('deal.co_sell_updated', theirDeal.id)).toEqual([]);
    // Nor does the account's own test mode.
    expect((await api('GET', `/v1/deals/${myDeal.id}`, undefined, account.testKey)).status).toBe(404);
  });

  // Last on purpose: it reads what every test above sent, received and logged.
  it('no response and no log line ever held a secret, a refresh token or an issued token', () => {
    for (const call of [...crms.microsoft.requests, ...crms.partnerCenter.requests]) {
      const token = bearerOf(call);
      if (token) ledger.secrets.add(token);
      const refresh = new URLSearchParams(call.body).get('refresh_token');
      if (call.path.endsWith('/oauth2/v2.0/token') && refresh) ledger.secrets.add(refresh);
    }
    ledger.expectNothingLeaked();
  });
});
