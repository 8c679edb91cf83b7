import { LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';
import { ReceivedMail, SmtpInbox, startSmtpInbox } from '../helpers/fakes/smtp-inbox';
import { waitFor } from '../helpers/wait';
import { csrfOf, http, PASSWORD, sessionCookie } from '../helpers/web';
import { hashPassword } from '../../src/modules/accounts/password';
import { User } from '../../src/modules/accounts/user.entity';
import { Plan } from '../../src/modules/accounts/plan';

/**
 * Members (issue 67): an account's first owner is its login; admins and owners invite people by
 * e-mail (a single-use link, 7 days), who join by choosing a password; roles limit what the web
 * session may do through the same permission check as restricted keys; the account keeps an
 * owner and its plan's seats. Through the API (keys with the `members` permission) and the web app,
 * with the app's mail delivered to a loopback SMTP server.
 */
const PUBLIC_URL = 'https://app.example.test';
let counter = 0;
const uniqueEmail = (who: string) => `${who}-${Date.now()}-${++counter}@members.test`;

describe('members', () => {
  let inbox: SmtpInbox;
  let app: TestApp;

  const mailFor = (address: string, count = 1) =>
    waitFor(`${count} message(s) for ${address}`, () => inbox.for(address).length >= count && inbox.for(address)[count - 1]);
  const linkIn = (mail: ReceivedMail): string => {
    const match = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}(/invitations/accept\\?token=[A-Za-z0-9_-]{43})\\b`).exec(mail.text);
    if (!match) throw new Error(`no invitation link in: ${mail.text}`);
    return match[1];
  };

  /** The account's owner signed in to the web app (the helper's accounts have no password: one is set here, as set-up). */
  async function ownerSession(owner: TestAccount): Promise<{ cookie: string; csrf: string }> {
    await app.orm.em.fork().nativeUpdate(User, { email: owner.account.email }, { passwordHash: await hashPassword(PASSWORD), emailVerifiedAt: new Date() });
    const login = await http(app, 'POST', '/login', { form: { email: owner.account.email, password: PASSWORD } });
    expect(login.status).toBe(303);
    const cookie = sessionCookie(login);
    return { cookie, csrf: csrfOf((await http(app, 'GET', '/settings/password', { cookie })).text) };
  }

  /** Invites `email` with the owner's key, follows the e-mailed link and chooses a password: a signed-in session of the new member. */
  async function join(owner: TestAccount, email: string, role: string): Promise<{ id: string; cookie: string; csrf: string }> {
    const before = inbox.for(email).length;
    const invited = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email, role } });
    expect(invited.status).toBe(201);
    const link = linkIn(await mailFor(email, before + 1));
    const accepted = await http(app, 'POST', '/invitations/accept', {
      form: { token: new URL(link, PUBLIC_URL).searchParams.get('token')!, password: PASSWORD },
    });
    expect(accepted.status).toBe(303);
    const cookie = sessionCookie(accepted);
    return { id: invited.body.id, cookie, csrf: csrfOf((await http(app, 'GET', '/settings/password', { cookie })).text) };
  }

  const sessionGraphql = (session: { cookie: string; csrf: string }, query: string, variables?: Record<string, unknown>) =>
    fetch(`${app.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: session.cookie, 'x-csrf-token': session.csrf },
      body: JSON.stringify({ query, variables }),
    }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions: { code: string } }> },
    }));

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    app = await startTestApp({ env: { ...LOCAL_RECEIVERS, SMTP_URL: inbox.url, MAIL_FROM: 'Sales Pipeline <accounts@example.test>', PUBLIC_URL } });
  });
  afterAll(async () => {
    await app?.close();
    await inbox?.close();
  });

  it("an account's login is its first owner: listed with a usr_ id, both modes alike", async () => {
    const owner = await app.createAccount();
    for (const key of [owner.testKey, owner.liveKey]) {
      const listed = await app.request('GET', '/v1/members', { key });
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ object: 'list', has_more: false });
      expect(listed.body.data).toEqual([
        expect.objectContaining({
          object: 'member',
          email: owner.account.email,
          role: 'owner',
          status: 'active',
          last_seen_at: null,
          id: expect.stringMatching(/^usr_[0-9A-Z]{26}$/),
        }),
      ]);
    }
    const [{ id }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
    expect((await app.request('GET', `/v1/members/${id}`, { key: owner.liveKey })).body).toMatchObject({ id, role: 'owner' });
  });

  it('an invitation is e-mailed, accepted once with a new password, and the member signs in to the account', async () => {
    const owner = await app.createAccount();
    const email = uniqueEmail('ada');
    const invited = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email, role: 'member', name: 'Ada' } });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email, name: 'Ada', role: 'member', status: 'invited', object: 'member' });
    expect(JSON.stringify(invited.body)).not.toMatch(/token/);
    const mail = await mailFor(email);
    expect(mail.subject).toContain(owner.account.name);
    const link = linkIn(mail);
    const token = new URL(link, PUBLIC_URL).searchParams.get('token')!;

    const form = await http(app, 'GET', link);
    expect(form.status).toBe(200);
    expect(form.text).toContain(`You were invited to <strong>${owner.account.name}</strong>`);
    // Too short: refused with the form again, the link still good.
    const short = await http(app, 'POST', '/invitations/accept', { form: { token, password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 10 characters');
    const accepted = await http(app, 'POST', '/invitations/accept', { form: { token, password: PASSWORD } });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe('/dashboard');
    // Used: the same link does nothing more.
    const again = await http(app, 'POST', '/invitations/accept', { form: { token, password: PASSWORD } });
    expect(again.status).toBe(400);
    expect(again.text).toContain('no longer works');
    expect((await http(app, 'GET', link)).status).toBe(400);

    expect((await app.request('GET', `/v1/members/${invited.body.id}`, { key: owner.testKey })).body).toMatchObject({ status: 'active', last_seen_at: null });
    const login = await http(app, 'POST', '/login', { form: { email, password: PASSWORD } });
    expect(login.status).toBe(303);
    expect((await http(app, 'GET', '/dashboard', { cookie: sessionCookie(login) })).text).toContain(owner.account.name);
    expect((await app.request('GET', `/v1/members/${invited.body.id}`, { key: owner.testKey })).body.last_seen_at).toEqual(expect.any(String));
  });

  it('a refused invitation link says why', async () => {
    const broken = await http(app, 'GET', '/invitations/accept?token=not-a-token');
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('invite you again');
    const owner = await app.createAccount();
    const email = uniqueEmail('late');
    await app.request('POST', '/v1/members', { key: owner.testKey, body: { email, role: 'viewer' } });
    const link = linkIn(await mailFor(email));
    await app.orm.em.getConnection().execute(`update account_email_tokens set expires_at = now() - interval '1 second' where purpose = 'invitation'`);
    expect((await http(app, 'GET', link)).status).toBe(400);
  });

  it('conflicts: an active member again, past the seats of the plan; an invited one gets a fresh link', async () => {
    const owner = await app.createAccount({ plan: Plan.starter });
    const again = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: owner.account.email, role: 'admin' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'resource_conflict', param: 'email' });

    const second = uniqueEmail('second');
    expect((await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: second, role: 'member' } })).status).toBe(201);
    // Invited again: a second link, still one seat.
    expect((await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: second, role: 'viewer' } })).body).toMatchObject({
      role: 'viewer',
      status: 'invited',
    });
    await mailFor(second, 2);
    expect((await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: uniqueEmail('third'), role: 'member' } })).status).toBe(201);
    const fourth = await app.request('POST', '/v1/members', { key: owner.liveKey, body: { email: uniqueEmail('fourth'), role: 'member' } });
    expect(fourth.status).toBe(409);
    expect(fourth.body.error.code).toBe('seat_limit_reached');
    expect(fourth.body.error.message).toContain('3 seats');
    expect((await app.request('GET', '/v1/members?limit=10', { key: owner.testKey })).body.data).toHaveLength(3);
  });

  it('bad input is a 400 in the contract shape, and nothing is written', async () => {
    const owner = await app.createAccount();
    const bad = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: 'not-an-address', role: 'member' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
    const role = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: uniqueEmail('x'), role: 'superuser' } });
    expect(role.status).toBe(400);
    expect((await app.request('GET', '/v1/members', { key: owner.testKey })).body.data).toHaveLength(1);
    expect((await app.request('GET', '/v1/members/usr_nope', { key: owner.testKey })).status).toBe(404);
  });

  it('owners stay: a key cannot make or change an owner, the last owner cannot be demoted or removed', async () => {
    const owner = await app.createAccount();
    const [{ id: ownerId }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
    const made = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: uniqueEmail('boss'), role: 'owner' } });
    expect(made.status).toBe(403);
    expect(made.body.error.code).toBe('permission_denied');
    expect((await app.request('PUT', `/v1/members/${ownerId}`, { key: owner.testKey, body: { role: 'admin' } })).status).toBe(403);

    // As the owner in the web app: demoting or removing the last owner is 409; with a second owner it works.
    const session = await ownerSession(owner);
    const demote = await sessionGraphql(session, 'mutation($id: ID!) { updateMember(id: $id, input: {role: admin}) { role } }', { id: ownerId });
    expect(demote.body.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT' } });
    expect(demote.body.errors?.[0].message).toContain('at least one active owner');
    const remove = await sessionGraphql(session, 'mutation($id: ID!) { deactivateMember(id: $id) { status } }', { id: ownerId });
    expect(remove.body.errors?.[0].extensions.code).toBe('CONFLICT');

    const other = await join(owner, uniqueEmail('co-owner'), 'admin');
    const promoted = await sessionGraphql(session, 'mutation($id: ID!) { updateMember(id: $id, input: {role: owner}) { role } }', { id: other.id });
    expect(promoted.body.data).toEqual({ updateMember: { role: 'owner' } });
    const demoted = await sessionGraphql(session, 'mutation($id: ID!) { updateMember(id: $id, input: {role: viewer}) { role } }', { id: ownerId });
    expect(demoted.body.data).toEqual({ updateMember: { role: 'viewer' } });
  });

  it('roles limit the session as permissions limit a key: a member writes leads, not webhooks; a viewer only reads', async () => {
    const owner = await app.createAccount();
    const member = await join(owner, uniqueEmail('rep'), 'member');
    const created = await sessionGraphql(member, 'mutation { createLead(input: {company: "Rep Co", contactEmail: "rep@co.test"}) { id } }');
    expect(created.body.data?.createLead).toEqual({ id: expect.stringMatching(/^lead_/) });
    const hook = await sessionGraphql(member, 'mutation { createWebhook(input: {url: "https://example.com/h", events: ["*"]}) { id } }');
    expect(hook.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect(hook.body.errors?.[0].message).toContain('webhooks:write');
    expect((await sessionGraphql(member, '{ members { data { id } } }')).body.errors?.[0].message).toContain('members:read');
    // The keys page says what is missing instead of an error.
    const keys = await http(app, 'GET', '/settings/api-keys', { cookie: member.cookie });
    expect(keys.status).toBe(403);
    expect(keys.text).toContain('Managing API keys needs the owner or admin role');

    const viewer = await join(owner, uniqueEmail('auditor'), 'viewer');
    expect((await sessionGraphql(viewer, '{ leads { data { company } } }')).body.data).toEqual({ leads: { data: [{ company: 'Rep Co' }] } });
    const write = await sessionGraphql(viewer, 'mutation { createLead(input: {company: "No", contactEmail: "no@co.test"}) { id } }');
    expect(write.body.errors?.[0].message).toContain('leads:write');
  });

  it("a deactivated member's sessions end at once, and they cannot sign in to the account", async () => {
    const owner = await app.createAccount();
    const email = uniqueEmail('leaver');
    const leaver = await join(owner, email, 'admin');
    expect((await http(app, 'GET', '/dashboard', { cookie: leaver.cookie })).status).toBe(200);
    const removed = await app.request('DELETE', `/v1/members/${leaver.id}`, { key: owner.testKey });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: leaver.id, status: 'deactivated' });
    const after = await http(app, 'GET', '/dashboard', { cookie: leaver.cookie });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/login');
    expect((await http(app, 'POST', '/login', { form: { email, password: PASSWORD } })).status).toBe(401);
    // Invited again, they come back.
    const back = await app.request('POST', '/v1/members', { key: owner.testKey, body: { email, role: 'member' } });
    expect(back.body).toMatchObject({ id: leaver.id, status: 'invited', role: 'member' });
  });

  it('a person in two accounts switches between them in the header; a foreign account is 403 and changes nothing', async () => {
    const first = await app.createAccount({ name: 'Alpha Switch Co' });
    const second = await app.createAccount({ name: 'Beta Switch Co' });
    const foreign = await app.createAccount({ name: 'Foreign Switch Co' });
    const session = await ownerSession(first);
    const dashboardTitle = async () => /<h1>([^<]*)<\/h1>/.exec((await http(app, 'GET', '/dashboard', { cookie: session.cookie })).text)?.[1];
    // One account: no switcher.
    expect((await http(app, 'GET', '/dashboard', { cookie: session.cookie })).text).not.toContain('action="/settings/account"');

    // Invited to the second account, they confirm with the password they sign in with.
    await app.request('POST', '/v1/members', { key: second.testKey, body: { email: first.account.email, role: 'member' } });
    const token = new URL(linkIn(await mailFor(first.account.email)), PUBLIC_URL).searchParams.get('token')!;
    expect((await http(app, 'POST', '/invitations/accept', { form: { token, password: PASSWORD } })).status).toBe(303);
    const page = (await http(app, 'GET', '/dashboard', { cookie: session.cookie })).text;
    const offered = [...page.matchAll(/<option value="(acct_[0-9A-Z]+)" ?(selected)?>([^<]*)<\/option>/g)].map(([, id, selected, name]) => ({
      id,
      name,
      selected: !!selected,
    }));
    expect(offered).toEqual([
      { id: first.account.id, name: 'Alpha Switch Co', selected: true },
      { id: second.account.id, name: 'Beta Switch Co', selected: false },
    ]);
    expect(await dashboardTitle()).toBe('Alpha Switch Co: pipeline');

    const switchTo = (accountId: string, csrf = session.csrf) =>
      http(app, 'POST', '/settings/account', { cookie: session.cookie, form: { _csrf: csrf, account_id: accountId } });
    const moved = await switchTo(second.account.id);
    expect([moved.status, moved.headers.get('location')]).toEqual([303, '/dashboard']);
    expect(await dashboardTitle()).toBe('Beta Switch Co: pipeline');
    // The session works in the other account now: its GraphQL reads that account's members, as a member would.
    expect((await sessionGraphql(session, '{ members { data { id } } }')).body.errors?.[0].message).toContain('members:read');

    // Not a member of it: refused, and the session stays where it was.
    const refused = await switchTo(foreign.account.id);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('you are not an active member of that account');
    expect(await dashboardTitle()).toBe('Beta Switch Co: pipeline');
    // Without the session's token: the stale-form page, nothing changed.
    expect((await switchTo(first.account.id, 'not-the-token')).status).toBe(403);
    expect(await dashboardTitle()).toBe('Beta Switch Co: pipeline');

    // Back to the first; then, deactivated in the second, they can no longer switch to it, nor see it offered.
    expect((await switchTo(first.account.id)).status).toBe(303);
    expect(await dashboardTitle()).toBe('Alpha Switch Co: pipeline');
    const [{ id: personId }] = (await app.request('GET', '/v1/members', { key: first.testKey })).body.data;
    expect((await app.request('DELETE', `/v1/members/${personId}`, { key: second.testKey })).status).toBe(200);
    expect((await switchTo(second.account.id)).status).toBe(403);
    expect(await dashboardTitle()).toBe('Alpha Switch Co: pipeline');
    expect((await http(app, 'GET', '/dashboard', { cookie: session.cookie })).text).not.toContain('action="/settings/account"');
  });

  it('a key needs the members permission; another account reads none of these members', async () => {
    const owner = await app.createAccount();
    const other = await app.createAccount();
    const [{ id }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
    expect((await app.request('GET', `/v1/members/${id}`, { key: other.testKey })).status).toBe(404);
    expect((await app.request('PUT', `/v1/members/${id}`, { key: other.testKey, body: { name: 'x' } })).status).toBe(404);
    expect((await app.request('DELETE', `/v1/members/${id}`, { key: other.testKey })).status).toBe(404);
  });

  describe('owners of leads and deals', () => {
    it('an active member may own a lead or deal; lists filter by owner (and none), deals sort by it; events carry it', async () => {
      const owner = await app.createAccount();
      const [{ id: ownerId }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
      const rep = await join(owner, uniqueEmail('rep'), 'member');
      const mine = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'Mine', contact_email: 'mine@co.test', owner_id: rep.id } });
      expect(mine.status).toBe(201);
      expect(mine.body.owner_id).toBe(rep.id);
      const nobody = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'Nobody', contact_email: 'nobody@co.test' } });
      expect(nobody.body.owner_id).toBeNull();
      const boss = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'Boss', contact_email: 'boss@co.test', owner_id: ownerId } });

      const companies = async (query: string) =>
        (await app.request('GET', `/v1/leads?${query}`, { key: owner.testKey })).body.data.map((lead: { company: string }) => lead.company).sort();
      expect(await companies(`owner_id=${rep.id}`)).toEqual(['Mine']);
      expect(await companies('owner_id=none')).toEqual(['Nobody']);
      expect(await companies(`owner_id=${rep.id},none`)).toEqual(['Mine', 'Nobody']);
      expect((await app.request('GET', '/v1/leads?owner_id=someone', { key: owner.testKey })).body.error).toMatchObject({
        code: 'parameter_invalid',
        param: 'owner_id',
      });
      // The other mode has none of them.
      expect((await app.request('GET', `/v1/leads?owner_id=${rep.id}`, { key: owner.liveKey })).body.data).toEqual([]);

      // Changed and cleared; the event carries the owner, before and after.
      expect((await app.request('PUT', `/v1/leads/${boss.body.id}`, { key: owner.testKey, body: { owner_id: null } })).body.owner_id).toBeNull();
      const events = await app.request('GET', `/v1/events?type=lead.updated&object_id=${boss.body.id}`, { key: owner.testKey });
      expect(events.body.data[0].data).toMatchObject({ object: { owner_id: null }, previous_attributes: { owner_id: ownerId } });

      const deal = (name: string, ownerOf?: string) =>
        app.request('POST', '/v1/deals', { key: owner.testKey, body: { name, value: 100, ...(ownerOf ? { owner_id: ownerOf } : {}) } });
      expect((await deal('Rep deal', rep.id)).body.owner_id).toBe(rep.id);
      await deal('Boss deal', ownerId);
      await deal('Open deal');
      const sorted = (await app.request('GET', '/v1/deals?sort=owner_id', { key: owner.testKey })).body.data.map(
        (d: { owner_id: string | null }) => d.owner_id,
      );
      expect(sorted).toEqual([...[ownerId, rep.id].sort(), null]);
    });

    it('refuses an owner who is not an active member of the account: another account, invited, deactivated', async () => {
      const owner = await app.createAccount();
      const other = await app.createAccount();
      const [{ id: stranger }] = (await app.request('GET', '/v1/members', { key: other.testKey })).body.data;
      const invited = (await app.request('POST', '/v1/members', { key: owner.testKey, body: { email: uniqueEmail('pending'), role: 'member' } })).body.id;
      for (const ownerId of [stranger, invited, 'usr_00000000000000000000000000', 'not-an-id']) {
        const refused = await app.request('POST', '/v1/leads', {
          key: owner.testKey,
          body: { company: 'X', contact_email: `x-${ownerId}@co.test`, owner_id: ownerId },
        });
        expect({ ownerId, status: refused.status, param: refused.body.error?.param }).toEqual({ ownerId, status: 400, param: 'owner_id' });
      }
      expect((await app.request('GET', '/v1/leads', { key: owner.testKey })).body.data).toEqual([]);
    });

    it('deactivating a member who owns records requires a member to hand them to, in both modes', async () => {
      const owner = await app.createAccount();
      const [{ id: ownerId }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
      const leaver = await join(owner, uniqueEmail('leaving'), 'member');
      const testLead = await app.request('POST', '/v1/leads', { key: owner.testKey, body: { company: 'T', contact_email: 't@co.test', owner_id: leaver.id } });
      const liveDeal = await app.request('POST', '/v1/deals', { key: owner.liveKey, body: { name: 'L', value: 1, owner_id: leaver.id } });

      const refused = await app.request('DELETE', `/v1/members/${leaver.id}`, { key: owner.testKey });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toMatch(/owns 1 lead and 1 deal: name an active member to hand them to/);
      expect((await app.request('GET', `/v1/members/${leaver.id}`, { key: owner.testKey })).body.status).toBe('active');
      expect((await app.request('DELETE', `/v1/members/${leaver.id}?transfer_to=${leaver.id}`, { key: owner.testKey })).status).toBe(400);

      const done = await app.request('DELETE', `/v1/members/${leaver.id}?transfer_to=${ownerId}`, { key: owner.testKey });
      expect(done.body).toMatchObject({ status: 'deactivated' });
      expect((await app.request('GET', `/v1/leads/${testLead.body.id}`, { key: owner.testKey })).body.owner_id).toBe(ownerId);
      expect((await app.request('GET', `/v1/deals/${liveDeal.body.id}`, { key: owner.liveKey })).body.owner_id).toBe(ownerId);
    });
  });

  describe('who did what', () => {
    it("every event names its actor and request: a key's with its Idempotency-Key, a member's in the web app", async () => {
      const owner = await app.createAccount();
      const made = await app.request('POST', '/v1/leads', {
        key: owner.testKey,
        headers: { 'idempotency-key': 'actor-check-1' },
        body: { company: 'Acted', contact_email: 'acted@co.test' },
      });
      expect(made.status).toBe(201);
      const keyId = (await app.orm.em.getConnection().execute(`select id from api_keys where account_id = ? and type = 'test'`, [owner.account.id]))[0].id;
      const [created] = (await app.request('GET', `/v1/events?type=lead.created&object_id=${made.body.id}`, { key: owner.testKey })).body.data;
      expect(created).toMatchObject({
        type: 'lead.created',
        actor: { type: 'api_key', id: keyId },
        request: { id: made.headers.get('x-request-id'), idempotency_key: 'actor-check-1' },
      });

      const rep = await join(owner, uniqueEmail('actor'), 'member');
      const renamed = await sessionGraphql(rep, `mutation { updateLead(id: "${made.body.id}", input: {company: "Renamed"}) { id } }`);
      expect(renamed.body.errors).toBeUndefined();
      const [updated] = (await app.request('GET', `/v1/events?type=lead.updated&object_id=${made.body.id}`, { key: owner.testKey })).body.data;
      expect(updated.actor).toEqual({ type: 'member', id: rep.id });
      expect(updated.request).toEqual({ id: expect.stringMatching(/^req_/), idempotency_key: null });
    });
  });

  describe('the security log', () => {
    it('records sign-ins (with address and user agent), members, keys and rolled secrets; owners and admins read it, filtered; nothing edits it', async () => {
      const owner = await app.createAccount();
      const session = await ownerSession(owner);
      const [{ id: ownerId }] = (await app.request('GET', '/v1/members', { key: owner.testKey })).body.data;
      const failed = await http(app, 'POST', '/login', {
        form: { email: owner.account.email, password: 'not the password' },
        headers: { 'user-agent': 'attacker/1.0' },
      });
      expect(failed.status).toBe(401);
      const email = uniqueEmail('logged');
      const rep = await join(owner, email, 'member');
      await app.request('PUT', `/v1/members/${rep.id}`, { key: owner.testKey, body: { role: 'viewer' } });
      await app.request('DELETE', `/v1/members/${rep.id}`, { key: owner.testKey });
      const hook = await app.request('POST', '/v1/webhooks', { key: owner.liveKey, body: { url: 'http://127.0.0.1:9/log', events: ['*'] } });
      expect((await app.request('POST', `/v1/webhooks/${hook.body.id}/roll_secret`, { key: owner.liveKey, body: {} })).status).toBe(200);
      const made = await http(app, 'POST', '/settings/api-keys', {
        cookie: session.cookie,
        form: { _csrf: session.csrf, type: 'test', kind: 'secret', name: 'Logged key' },
      });
      expect(made.status).toBe(303);

      const log = await app.request('GET', '/v1/security_events?limit=50', { key: owner.testKey });
      expect(log.status).toBe(200);
      const types = log.body.data.map((entry: { type: string }) => entry.type);
      expect(types).toEqual([
        'api_key.created',
        'webhook.secret_rolled',
        'member.deactivated',
        'member.role_changed',
        // Accepting the invitation signs the new member in.
        'sign_in.succeeded',
        'member.joined',
        'member.invited',
        'sign_in.failed',
        'sign_in.succeeded',
        // The test account's two keys, made by the set-up (the service acting).
        'api_key.created',
        'api_key.created',
      ]);
      const byType = Object.fromEntries(log.body.data.map((entry: { type: string }) => [entry.type, entry]));
      expect(byType['sign_in.failed']).toMatchObject({ object: 'security_event', member_id: ownerId, address: expect.any(String), user_agent: 'attacker/1.0' });
      expect(byType['member.role_changed']).toMatchObject({ member_id: rep.id, actor: { type: 'api_key' }, details: { from: 'member', to: 'viewer' } });
      expect(log.body.data[0]).toMatchObject({ type: 'api_key.created', actor: { type: 'member', id: ownerId }, details: { name: 'Logged key' } });
      // The same log in both modes; filtered by type and member.
      expect((await app.request('GET', '/v1/security_events?limit=50', { key: owner.liveKey })).body.data).toHaveLength(types.length);
      const filtered = await app.request('GET', `/v1/security_events?type=member.invited,member.deactivated&member_id=${rep.id}`, { key: owner.testKey });
      expect(filtered.body.data.map((entry: { type: string }) => entry.type)).toEqual(['member.deactivated', 'member.invited']);
      expect((await app.request('GET', '/v1/security_events?type=made.up', { key: owner.testKey })).status).toBe(400);
      // Read-only: no route changes it; another account sees none of it.
      expect((await app.request('DELETE', `/v1/security_events/${log.body.data[0].id}`, { key: owner.testKey })).status).toBe(404);
      const other = await app.createAccount();
      const theirs = (await app.request('GET', '/v1/security_events?limit=50', { key: other.testKey })).body.data.map((entry: { id: string }) => entry.id);
      expect(theirs.filter((id: string) => log.body.data.some((entry: { id: string }) => entry.id === id))).toEqual([]);
    });

    it('a member or viewer may not read it; an admin may', async () => {
      const owner = await app.createAccount();
      const member = await join(owner, uniqueEmail('curious'), 'member');
      const refused = await sessionGraphql(member, '{ securityEvents { data { type } } }');
      expect(refused.body.errors?.[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
      expect(refused.body.errors?.[0].message).toContain('security_events:read');
      const admin = await join(owner, uniqueEmail('admin'), 'admin');
      expect((await sessionGraphql(admin, '{ securityEvents { data { type } } }')).body.data).toEqual({
        securityEvents: { data: expect.arrayContaining([{ type: 'member.joined' }]) },
      });
    });
  });
});
