import { randomUUID } from 'node:crypto';
import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { HttpResponse, LOCAL_RECEIVERS, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * CONTRACT §12 through real HTTP and PostgreSQL: a POST with an Idempotency-Key runs once; the same
 * key and body replay the first answer; another body is 422; a retry while the first runs is 409.
 */

const newKey = () => `idem-${randomUUID()}`;
let counter = 0;
const leadBody = () => {
  counter += 1;
  return { company: `Idem Co ${counter}`, contact_email: `idem${counter}@idem${counter}.test`, industry: 'Software', employees: 50 };
};

function expectRestError(response: HttpResponse, status: number, type: string, code: string): void {
  expect(response.status).toBe(status);
  expect(Object.keys(response.body)).toEqual(['error']);
  expect(response.body.error).toMatchObject({ type, code });
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.error.request_id).toMatch(/^req_/);
}

const replayed = (response: HttpResponse) => response.headers.get('idempotent-replayed');

describe('Idempotency-Key', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    // Webhooks to a loopback address are allowed, as for a receiver in development.
    app = await startTestApp({ env: LOCAL_RECEIVERS });
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  const sql = <T = Record<string, unknown>>(query: string, params: unknown[] = []) => app.orm.em.getConnection().execute(query, params) as Promise<T[]>;
  const leadCount = async (account: TestAccount, livemode = false): Promise<number> =>
    (await sql<{ n: number }>('select count(*)::int as n from leads where account_id = ? and livemode = ?', [account.account.id, livemode]))[0].n;
  const leadsWith = async (account: TestAccount, email: string): Promise<number> =>
    (await sql<{ n: number }>('select count(*)::int as n from leads where account_id = ? and contact_email = ?', [account.account.id, email]))[0].n;
  const post = (key: string, idempotencyKey: string | undefined, body: unknown, target: TestApp = app) =>
    target.request('POST', '/v1/leads', { key, body, headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey } });

  it('replays the first answer for the same key and body, creating one lead', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    const first = await post(account.testKey, key, body);
    expect(first.status).toBe(201);
    expect(replayed(first)).toBeNull();

    const second = await post(account.testKey, key, body);
    expect(second.status).toBe(201);
    expect(replayed(second)).toBe('true');
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    expect(second.text).toBe(first.text);
    expect(second.body.id).toBe(first.body.id);

    const third = await post(account.testKey, key, body);
    expect(third.text).toBe(first.text);
    expect(replayed(third)).toBe('true');
    expect(await leadCount(account)).toBe(1);
    // Without the key, the same body runs again (and meets the taken email).
    const unkeyed = await post(account.testKey, undefined, body);
    expectRestError(unkeyed, 409, 'invalid_request_error', 'resource_conflict');
    expect(replayed(unkeyed)).toBeNull();
    expect(await leadCount(account)).toBe(1);
  });

  it('treats the same body with its keys in another order as the same request', async () => {
    const key = newKey();
    const email = `order-${randomUUID()}@order.test`;
    const first = await app.request('POST', '/v1/leads', {
      key: owner.testKey,
      rawBody: `{"company":"Order Co","contact_email":"${email}","metadata":{"a":"1","b":"2"}}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    const reordered = await app.request('POST', '/v1/leads', {
      key: owner.testKey,
      rawBody: `{ "metadata": {"b": "2", "a": "1"}, "contact_email": "${email}", "company": "Order Co" }`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    expect(reordered.status).toBe(201);
    expect(replayed(reordered)).toBe('true');
    expect(reordered.body.id).toBe(first.body.id);
    expect(await leadsWith(owner, email)).toBe(1);
  });

  it('refuses the same key with a different body: 422 idempotency_key_reused', async () => {
    const key = newKey();
    const body = leadBody();
    const first = await post(owner.testKey, key, body);
    expect(first.status).toBe(201);
    const changed = await post(owner.testKey, key, { ...body, company: 'Something else' });
    expectRestError(changed, 422, 'idempotency_error', 'idempotency_key_reused');
    expect(changed.body.error.param).toBe('Idempotency-Key');
    expect(replayed(changed)).toBeNull();
    // A value of another type is another body too.
    expectRestError(await post(owner.testKey, key, { ...body, employees: '50' }), 422, 'idempotency_error', 'idempotency_key_reused');
    expect(await leadsWith(owner, body.contact_email)).toBe(1);
    // The original still replays.
    expect((await post(owner.testKey, key, body)).text).toBe(first.text);
  });

  it('runs 10 simultaneous POSTs with one key (on two instances) once: the rest are 409 idempotency_in_progress or replays', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    const other = await startTestApp();
    let responses: HttpResponse[];
    try {
      responses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(account.testKey, key, body, i % 2 === 0 ? app : other)));
    } finally {
      await other.close();
    }
    const originals = responses.filter((r) => r.status === 201 && replayed(r) === null);
    const replays = responses.filter((r) => r.status === 201 && replayed(r) === 'true');
    const inProgress = responses.filter((r) => r.status === 409);
    expect(originals).toHaveLength(1);
    expect(replays.length + inProgress.length).toBe(9);
    for (const replay of replays) expect(replay.text).toBe(originals[0].text);
    for (const conflict of inProgress) {
      expectRestError(conflict, 409, 'idempotency_error', 'idempotency_in_progress');
      expect(conflict.body.error.param).toBe('Idempotency-Key');
    }
    expect(await leadCount(account)).toBe(1);
    // Once the first is done, retries replay it, even several at once (a replay holds no claim).
    const retries = await Promise.all(Array.from({ length: 6 }, () => post(account.testKey, key, body)));
    for (const retry of retries) {
      expect(replayed(retry)).toBe('true');
      expect(retry.body.id).toBe(originals[0].body.id);
    }
  });

  it('replays across instances and after a restart (keys live in PostgreSQL)', async () => {
    const key = newKey();
    const body = leadBody();
    const first = await post(owner.testKey, key, body);
    expect(first.status).toBe(201);

    const other = await startTestApp();
    try {
      const elsewhere = await post(owner.testKey, key, body, other);
      expect(replayed(elsewhere)).toBe('true');
      expect(elsewhere.text).toBe(first.text);
      expectRestError(await post(owner.testKey, key, leadBody(), other), 422, 'idempotency_error', 'idempotency_key_reused');
    } finally {
      await other.close();
    }

    // A restart: the instance that made the key is gone, a new one answers on the same database.
    const before = await startTestApp();
    const restartKey = newKey();
    const restartBody = leadBody();
    const original = await post(owner.testKey, restartKey, restartBody, before);
    expect(original.status).toBe(201);
    await before.close();
    const after = await startTestApp();
    try {
      const again = await post(owner.testKey, restartKey, restartBody, after);
      expect(again.status).toBe(201);
      expect(replayed(again)).toBe('true');
      expect(again.text).toBe(original.text);
    } finally {
      await after.close();
    }
    expect(await leadsWith(owner, restartBody.contact_email)).toBe(1);
  });

  it('keeps keys per account and mode: the same key elsewhere runs on its own', async () => {
    const a = await app.createAccount();
    const b = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    const testMode = await post(a.testKey, key, body);
    const liveMode = await post(a.liveKey, key, body);
    const otherAccount = await post(b.testKey, key, body);
    for (const response of [testMode, liveMode, otherAccount]) {
      expect(response.status).toBe(201);
      expect(replayed(response)).toBeNull();
    }
    expect(new Set([testMode.body.id, liveMode.body.id, otherAccount.body.id]).size).toBe(3);
    expect(testMode.body.livemode).toBe(false);
    expect(liveMode.body.livemode).toBe(true);
    expect([await leadCount(a, false), await leadCount(a, true), await leadCount(b, false)]).toEqual([1, 1, 1]);

    // Each replays its own answer, and a different body under one does not disturb the others.
    expect((await post(a.liveKey, key, body)).body.id).toBe(liveMode.body.id);
    expectRestError(await post(b.testKey, key, leadBody()), 422, 'idempotency_error', 'idempotency_key_reused');
    expect((await post(a.testKey, key, body)).body.id).toBe(testMode.body.id);
    const rows = await sql<{ account_id: string; livemode: boolean }>('select account_id, livemode from idempotency_keys where key = ?', [key]);
    expect(rows).toHaveLength(3);
  });

  it('stores a validation 400 and replays it', async () => {
    const key = newKey();
    const invalid = { company: 'No email' };
    const first = await post(owner.testKey, key, invalid);
    expectRestError(first, 400, 'invalid_request_error', 'parameter_missing');
    expect(first.body.error.param).toBe('contact_email');
    const second = await post(owner.testKey, key, invalid);
    expect(second.status).toBe(400);
    expect(replayed(second)).toBe('true');
    // The stored answer, byte for byte (its request_id is the first request's).
    expect(second.text).toBe(first.text);
    // The key is spent on that body: a corrected body needs a new key.
    expectRestError(await post(owner.testKey, key, { ...invalid, contact_email: 'fixed@fixed.test' }), 422, 'idempotency_error', 'idempotency_key_reused');
  });

  it('refuses a key longer than 255 characters with 400, and accepts 255', async () => {
    const body = leadBody();
    const tooLong = await post(owner.testKey, 'k'.repeat(256), body);
    expectRestError(tooLong, 400, 'invalid_request_error', 'parameter_invalid');
    expect(tooLong.body.error.param).toBe('Idempotency-Key');
    expect(await leadsWith(owner, body.contact_email)).toBe(0);

    const longest = `${randomUUID()}${'k'.repeat(255 - 36)}`;
    const first = await post(owner.testKey, longest, body);
    expect(first.status).toBe(201);
    expect(replayed(await post(owner.testKey, longest, body))).toBe('true');
    expect(await leadsWith(owner, body.contact_email)).toBe(1);
  });

  it('answers 409 while a claim left running by an earlier version is fresh, and lets a retry take over a stale one', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    const first = await post(account.testKey, key, body);
    expect(first.status).toBe(201);
    // As if an earlier version, which committed its claim before running the request, had died
    // mid-way: its claim still running and its lead never committed. (This version never commits
    // a running claim: the key commits with the request's answer and changes, or not at all.)
    await sql(
      "update idempotency_keys set state = 'running', locked_at = now(), response_status = null, response_type = null, response_body = null where key = ? and account_id = ?",
      [key, account.account.id],
    );
    await sql('delete from leads where id = ?', [first.body.id]);

    const whileRunning = await post(account.testKey, key, body);
    expectRestError(whileRunning, 409, 'idempotency_error', 'idempotency_in_progress');
    expect(await leadCount(account)).toBe(0);

    await sql("update idempotency_keys set locked_at = now() - interval '2 minutes' where key = ? and account_id = ?", [key, account.account.id]);
    const takeover = await post(account.testKey, key, body);
    expect(takeover.status).toBe(201);
    expect(replayed(takeover)).toBeNull();
    expect(takeover.body.id).not.toBe(first.body.id);
    expect(await leadCount(account)).toBe(1);
    // The new answer is the one stored now.
    const retry = await post(account.testKey, key, body);
    expect(replayed(retry)).toBe('true');
    expect(retry.body.id).toBe(takeover.body.id);
    const [row] = await sql<{ state: string }>('select state from idempotency_keys where key = ? and account_id = ?', [key, account.account.id]);
    expect(row.state).toBe('done');
  });

  it('commits the answer and the write together: when the answer cannot be stored, the write is undone too', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    // A trigger that refuses to store this key's answer: the request's last step fails after the
    // lead and its events were written in the same transaction.
    await sql(`create or replace function refuse_idempotency_key() returns trigger language plpgsql as $$
      begin
        if new.key = '${key}' then raise exception 'refused by the test'; end if;
        return new;
      end $$`);
    await sql('create trigger refuse_idempotency_key before insert or update on idempotency_keys for each row execute function refuse_idempotency_key()');
    let refused: HttpResponse;
    try {
      refused = await post(account.testKey, key, body);
    } finally {
      await sql('drop trigger refuse_idempotency_key on idempotency_keys');
      await sql('drop function refuse_idempotency_key()');
    }
    expectRestError(refused, 500, 'api_error', 'internal_error');
    expect(await leadsWith(account, body.contact_email)).toBe(0);
    const events = await sql<{ n: number }>(`select count(*)::int as n from events where account_id = ? and data->'object'->>'contact_email' = ?`, [
      account.account.id,
      body.contact_email,
    ]);
    expect(events[0].n).toBe(0);
    expect(await sql('select 1 from idempotency_keys where key = ?', [key])).toHaveLength(0);

    // Nothing was kept, so the retry runs, once.
    const retry = await post(account.testKey, key, body);
    expect(retry.status).toBe(201);
    expect(replayed(retry)).toBeNull();
    expect((await post(account.testKey, key, body)).body.id).toBe(retry.body.id);
    expect(await leadsWith(account, body.contact_email)).toBe(1);
  });

  it('stores and replays a conflict met inside the transaction (a taken contact_email)', async () => {
    const account = await app.createAccount();
    const body = leadBody();
    expect((await post(account.testKey, undefined, body)).status).toBe(201);
    const key = newKey();
    const conflict = await post(account.testKey, key, { ...body, company: 'Second' });
    expectRestError(conflict, 409, 'invalid_request_error', 'resource_conflict');
    expect(conflict.body.error.param).toBe('contact_email');
    const again = await post(account.testKey, key, { ...body, company: 'Second' });
    expect(replayed(again)).toBe('true');
    expect(again.text).toBe(conflict.text);
    expect(await leadsWith(account, body.contact_email)).toBe(1);
  });

  it('keeps each mutation of a GraphQL document on its own, as without a key: one that fails does not undo the one before it', async () => {
    const account = await app.createAccount();
    const taken = leadBody();
    expect((await post(account.testKey, undefined, taken)).status).toBe(201);
    const fresh = leadBody();
    const key = newKey();
    const document = `mutation Two($a: LeadCreateInput!, $b: LeadCreateInput!) {
      a: createLead(input: $a) { id contactEmail }
      b: createLead(input: $b) { id contactEmail }
    }`;
    const variables = {
      a: { company: fresh.company, contactEmail: fresh.contact_email },
      b: { company: 'Duplicate', contactEmail: taken.contact_email },
    };
    const send = () => app.request('POST', '/graphql', { key: account.testKey, body: { query: document, variables }, headers: { 'idempotency-key': key } });
    const first = await send();
    expect(first.status).toBe(200);
    // createLead is non-null, so the failure of `b` nulls `data` (GraphQL's rule); the error says which failed.
    expect(first.body.errors).toHaveLength(1);
    expect(first.body.errors[0].path).toEqual(['b']);
    expect(first.body.errors[0].extensions).toMatchObject({ errorCode: 'resource_conflict' });
    // As without a key, `a` ran and committed before `b` failed, and `b` wrote nothing.
    expect(await leadsWith(account, fresh.contact_email)).toBe(1);
    expect(await leadsWith(account, taken.contact_email)).toBe(1);
    const second = await send();
    expect(replayed(second)).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await leadCount(account)).toBe(2);
  });

  it('runs an expired key again, with any body', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const body = leadBody();
    const first = await post(account.testKey, key, body);
    expect(first.status).toBe(201);
    const expire = () =>
      sql("update idempotency_keys set expires_at = now() - interval '1 second' where key = ? and account_id = ?", [key, account.account.id]);
    await expire();
    // It runs again rather than replaying: the email is taken now, so this run is a conflict.
    const rerun = await post(account.testKey, key, body);
    expectRestError(rerun, 409, 'invalid_request_error', 'resource_conflict');
    expect(replayed(rerun)).toBeNull();

    await expire();
    await sql('delete from leads where id = ?', [first.body.id]);
    const again = await post(account.testKey, key, body);
    expect(again.status).toBe(201);
    expect(replayed(again)).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await leadCount(account)).toBe(1);
    // Renewed for 24 h: now it replays the new answer.
    expect((await post(account.testKey, key, body)).body.id).toBe(again.body.id);
    const [row] = await sql<{ hours: number }>(
      'select extract(epoch from expires_at - now()) / 3600 as hours from idempotency_keys where key = ? and account_id = ?',
      [key, account.account.id],
    );
    expect(Number(row.hours)).toBeGreaterThan(23.9);
    expect(Number(row.hours)).toBeLessThanOrEqual(24);

    await expire();
    const otherBody = await post(account.testKey, key, leadBody());
    expect(otherBody.status).toBe(201);
    expect(replayed(otherBody)).toBeNull();
    expect(await leadCount(account)).toBe(2);
  });

  it('replays POST /graphql too', async () => {
    const account = await app.createAccount();
    const key = newKey();
    const mutation = 'mutation Create($input: LeadCreateInput!) { createLead(input: $input) { id company livemode } }';
    const input = { company: 'GraphQL Co', contactEmail: 'gql@gql.test' };
    const send = (variables: Record<string, unknown>) =>
      app.request('POST', '/graphql', { key: account.testKey, body: { query: mutation, variables }, headers: { 'idempotency-key': key } });
    const first = await send({ input });
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    expect(replayed(first)).toBeNull();
    const second = await send({ input });
    expect(second.status).toBe(200);
    expect(replayed(second)).toBe('true');
    expect(second.text).toBe(first.text);
    expect(second.body.data.createLead.id).toBe(first.body.data.createLead.id);
    expect(await leadCount(account)).toBe(1);

    const changed = await send({ input: { ...input, company: 'Other' } });
    expect(changed.status).toBe(422);
    expect(changed.body.errors[0].extensions).toMatchObject({ errorCode: 'idempotency_key_reused', type: 'idempotency_error' });
    expect(await leadCount(account)).toBe(1);
  });

  describe('and who may replay it', () => {
    const restrictedKey = async (account: TestAccount, permissions: string) =>
      (await new ApiKeyService(app.orm.em.fork()).create(account.account, KeyType.test, `restricted ${permissions}`, parsePermissions(permissions))).secret;
    const hookBody = { url: 'http://127.0.0.1:9/hook', events: ['deal.won'] };
    const createHook = (key: string, idempotencyKey: string, body: unknown = hookBody) =>
      app.request('POST', '/v1/webhooks', { key, body, headers: { 'idempotency-key': idempotencyKey } });

    it("checks a restricted key's permissions before any stored answer is replayed or compared: 403, never the full key's answer", async () => {
      const account = await app.createAccount();
      const key = newKey();
      const first = await createHook(account.testKey, key);
      expect(first.status).toBe(201);
      expect(first.body.secret).toMatch(/^whsec_/);
      const reader = await restrictedKey(account, 'leads=read');
      const replayAttempt = await createHook(reader, key);
      expectRestError(replayAttempt, 403, 'permission_error', 'permission_denied');
      expect(replayAttempt.body.error.message).toContain('webhooks:write');
      expect(replayed(replayAttempt)).toBeNull();
      expect(replayAttempt.text).not.toContain('whsec_');
      // Another body does not tell it the key was used (422): the permission comes first.
      expectRestError(await createHook(reader, key, { ...hookBody, events: ['*'] }), 403, 'permission_error', 'permission_denied');
      // The refusals were not stored: the full key still replays its own answer.
      const replay = await createHook(account.testKey, key);
      expect(replayed(replay)).toBe('true');
      expect(replay.text).toBe(first.text);
    });

    it('keeps keys per API key: another key allowed to make the request runs it on its own, and a rolled key keeps replaying', async () => {
      const account = await app.createAccount();
      const key = newKey();
      const first = await createHook(account.testKey, key);
      expect(first.status).toBe(201);
      const writer = await restrictedKey(account, 'webhooks=write');
      const own = await createHook(writer, key);
      expect(own.status).toBe(201);
      expect(replayed(own)).toBeNull();
      expect(own.body.id).not.toBe(first.body.id);
      expect(own.body.secret).not.toBe(first.body.secret);
      // Each key replays its own answer, and another body is 422 only against the key's own.
      expect((await createHook(writer, key)).body.id).toBe(own.body.id);
      expect((await createHook(account.testKey, key)).body.id).toBe(first.body.id);
      expectRestError(await createHook(writer, key, { ...hookBody, events: ['*'] }), 422, 'idempotency_error', 'idempotency_key_reused');
      // The same key id after a roll: a retry with the new value replays.
      const keys = new ApiKeyService(app.orm.em.fork());
      const created = await keys.create(account.account, KeyType.test, 'rolled', parsePermissions('webhooks=write'));
      const before = await createHook(created.secret, key);
      const rolled = await keys.roll(created.key.id);
      const after = await createHook(rolled.secret, key);
      expect(replayed(after)).toBe('true');
      expect(after.body.id).toBe(before.body.id);
    });

    it('lets any caller of the tenant match a key stored before keys were scoped per caller, after its permissions are checked', async () => {
      const account = await app.createAccount();
      const key = newKey();
      const body = leadBody();
      const first = await post(account.testKey, key, body);
      await sql("update idempotency_keys set principal = '' where key = ? and account_id = ?", [key, account.account.id]);
      const writer = await restrictedKey(account, 'leads=write');
      const replay = await post(writer, key, body);
      expect(replayed(replay)).toBe('true');
      expect(replay.text).toBe(first.text);
      expectRestError(await post(await restrictedKey(account, 'leads=read'), key, body), 403, 'permission_error', 'permission_denied');
      expect(await leadCount(account)).toBe(1);
    });

    it("on /graphql, refuses a restricted key's document with any refused field whole when it carries a key: nothing runs, nothing is stored or replayed", async () => {
      const account = await app.createAccount();
      const key = newKey();
      const createDeal = 'mutation { createDeal(input: {name: "Replayed", value: 10}) { id name } }';
      const send = (apiKey: string, query: string) => app.request('POST', '/graphql', { key: apiKey, body: { query }, headers: { 'idempotency-key': key } });
      const first = await send(account.testKey, createDeal);
      expect(first.body.data.createDeal.id).toMatch(/^deal_/);
      const reader = await restrictedKey(account, 'leads=read');
      const refused = await send(reader, createDeal);
      expect(refused.status).toBe(403);
      expect(replayed(refused)).toBeNull();
      expect(refused.body.data).toBeUndefined();
      expect(refused.body.errors[0]).toMatchObject({
        message: 'This key lacks the deals:write permission this request needs.',
        extensions: { code: 'FORBIDDEN', errorCode: 'permission_denied' },
      });
      // A document whose other root field is allowed is refused whole too: its lead is not created.
      const mixed = await send(
        reader,
        'mutation { createLead(input: {company: "Half", contactEmail: "half@half.test"}) { id } createDeal(input: {name: "No", value: 1}) { id } }',
      );
      expect(mixed.status).toBe(403);
      expect(await leadCount(account)).toBe(0);
      // A restricted key allowed to make it runs its own request.
      const writer = await restrictedKey(account, 'deals=write');
      const own = await send(writer, createDeal);
      expect(replayed(own)).toBeNull();
      expect(own.body.data.createDeal.id).not.toBe(first.body.data.createDeal.id);
      const [{ n }] = await sql<{ n: number }>('select count(*)::int as n from deals where account_id = ?', [account.account.id]);
      expect(n).toBe(2);
      // Without a key, the allowed root field of a mixed document still runs (the others are FORBIDDEN).
      const unkeyed = await app.graphql(
        'mutation { createLead(input: {company: "Half", contactEmail: "half@half.test"}) { id } createDeal(input: {name: "No", value: 1}) { id } }',
        undefined,
        await restrictedKey(account, 'leads=write'),
      );
      expect(unkeyed.body.data.createLead.id).toMatch(/^lead_/);
      expect(unkeyed.body.errors.map((error: { path: string[] }) => error.path)).toEqual([['createDeal']]);
    });
  });

  it('is ignored on GET (and nothing is stored)', async () => {
    const account = await app.createAccount();
    const key = newKey();
    for (let i = 0; i < 2; i++) {
      const response = await app.request('GET', '/v1/leads', { key: account.testKey, headers: { 'idempotency-key': key } });
      expect(response.status).toBe(200);
      expect(replayed(response)).toBeNull();
    }
    // Even a key too long to be valid: GET does not look at it.
    expect((await app.request('GET', '/v1/leads', { key: account.testKey, headers: { 'idempotency-key': 'k'.repeat(300) } })).status).toBe(200);
    expect(await sql('select 1 from idempotency_keys where account_id = ?', [account.account.id])).toHaveLength(0);
  });
});
