import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { KNOWN_TEXT_LENGTH } from '../../src/graphql/compiled-execution';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * /graphql runs a document it has seen before compiled with graphql-jit, and from its third sending
 * on answers it without Apollo's per-request pipeline (src/graphql/compiled-execution.ts). The
 * answer must not depend on which path ran it: each document below is sent three times (the first
 * by Apollo and graphql-js, the second by Apollo compiled, the third in front of Apollo) and every
 * answer, status, body and headers, errors included, is the same but for what changes by design
 * (new ids, times). The metric graphql_repeated_documents_total says which sendings skipped Apollo.
 */
describe('/graphql: a repeated document answers as its first sending did', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    // leadScore limited to 3 calls a minute, so a refusal raised inside execution is sent both ways.
    app = await startTestApp({ operationLimits: { ...OPERATION_LIMITS, leadScore: { windowS: 60, max: 3 } } });
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

  /** How many operations /graphql has answered without Apollo's pipeline, from GET /metrics. */
  const repeatedSoFar = async (): Promise<number> => {
    const metrics = await app.request('GET', '/metrics');
    expect(metrics.status).toBe(200);
    return Number(/^graphql_repeated_documents_total (\d+)$/m.exec(metrics.text)?.[1]);
  };

  const FIELDS = 'id object company contactEmail status score scoreLabel livemode';
  /** Ids, times and the new leads' addresses differ between sendings by design; everything else must not. */
  const stable = (response: HttpResponse) => ({
    status: response.status,
    body: JSON.parse(
      response.text
        .replace(/lead_[0-9A-Z]{26}/g, 'lead_ID')
        .replace(/compiled\d+@/g, 'compiled@')
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME'),
    ) as unknown,
    rateLimit: response.headers.get('x-ratelimit-limit'),
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
  });
  /** Sends a document three times; only the third skips Apollo, and only for an unrestricted key. */
  const thrice = async (query: string, variables: () => Record<string, unknown>, key = owner.testKey, skipsApollo = true) => {
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const before = await repeatedSoFar();
      answers.push(stable(await app.graphql(query, variables(), key)));
      expect((await repeatedSoFar()) - before).toBe(i === 2 && skipsApollo ? 1 : 0);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    return answers[0];
  };

  let n = 0;
  const email = () => `compiled${++n}@example.com`;

  it('answers data alike: a read, a list, a create', async () => {
    const created = await app.graphql(`mutation { createLead(input: { company: "Acme", contactEmail: "${email()}" }) { id } }`, undefined, owner.testKey);
    const id = (created.body as { data: { createLead: { id: string } } }).data.createLead.id;
    const read = await thrice(`query Read($id: ID!) { lead(id: $id) { ${FIELDS} } }`, () => ({ id }));
    expect(read.status).toBe(200);
    expect((read.body as { data: { lead: { company: string } } }).data.lead.company).toBe('Acme');
    await thrice(`query List($filter: LeadListInput) { leads(filter: $filter) { object hasMore data { ${FIELDS} } } }`, () => ({ filter: { limit: 5 } }));
    const create = await thrice(`mutation Create($input: LeadCreateInput!) { createLead(input: $input) { ${FIELDS} } }`, () => ({
      input: { company: 'Repeat', contactEmail: email() },
    }));
    expect((create.body as { data: { createLead: { company: string } } }).data.createLead.company).toBe('Repeat');
  });

  it('answers errors alike: not found, conflict, validation, an unknown operation name, bad variables', async () => {
    const missing = await thrice(`query Missing($id: ID!) { lead(id: $id) { id } }`, () => ({ id: `lead_${'0'.repeat(26)}` }));
    expect(missing.body).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND', errorCode: 'resource_missing' }, path: ['lead'] }] });

    const taken = email();
    await app.graphql(`mutation { createLead(input: { company: "First", contactEmail: "${taken}" }) { id } }`, undefined, owner.testKey);
    const conflict = await thrice(`mutation Dup($input: LeadCreateInput!) { createLead(input: $input) { id } }`, () => ({
      input: { company: 'Second', contactEmail: taken },
    }));
    expect(conflict.body).toMatchObject({ errors: [{ extensions: { code: 'CONFLICT', errorCode: 'resource_conflict', param: 'contactEmail' } }] });

    const invalid = await thrice(`mutation Bad($input: LeadCreateInput!) { createLead(input: $input) { id } }`, () => ({
      input: { company: 'Bad', contactEmail: 'not an address' },
    }));
    expect(invalid.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' } }] });

    // An operationName the document lacks: no operation resolves, Apollo's 400 every time (it was a 500 once compiled).
    const unknownName = [];
    for (let i = 0; i < 3; i++) {
      const response = await app.request('POST', '/graphql', { key: owner.testKey, body: { query: 'query A { __typename }', operationName: 'B' } });
      unknownName.push(stable(response));
    }
    expect(unknownName[0].status).toBe(400);
    expect(unknownName[1]).toEqual(unknownName[0]);
    expect(unknownName[2]).toEqual(unknownName[0]);

    const coercion = await thrice(`query Coerce($id: ID!) { lead(id: $id) { id } }`, () => ({ id: { not: 'an id' } }));
    expect(coercion.status).toBe(400);
    expect(coercion.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] });
  });

  it('answers a known document with refused input as Apollo does: bad variables, a refused check, a limit inside execution', async () => {
    const created = await app.graphql(`mutation { createLead(input: { company: "Scored", contactEmail: "${email()}" }) { id } }`, undefined, owner.testKey);
    const id = (created.body as { data: { createLead: { id: string } } }).data.createLead.id;
    /** The same request to a document Apollo knows (its third sending and on skip Apollo) and to a new text (a trailing space), which Apollo answers. */
    const both = async (query: string, variables: Record<string, unknown>) => {
      const before = await repeatedSoFar();
      const known = stable(await app.graphql(query, variables, owner.testKey));
      expect((await repeatedSoFar()) - before).toBe(1);
      const apollo = stable(await app.graphql(`${query} `, variables, owner.testKey));
      expect((await repeatedSoFar()) - before).toBe(1);
      expect(known).toEqual(apollo);
      return known;
    };

    const read = `query Read($id: ID!) { lead(id: $id) { id company } }`;
    for (let i = 0; i < 2; i++) expect((await app.graphql(read, { id }, owner.testKey)).status).toBe(200);
    const coercion = await both(read, { id: 42.5 });
    expect(coercion.status).toBe(400);
    expect(coercion.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_USER_INPUT', errorCode: 'parameter_invalid' } }] });

    const create = `mutation Create($input: LeadCreateInput!) { createLead(input: $input) { id } }`;
    for (let i = 0; i < 2; i++) await app.graphql(create, { input: { company: 'Known', contactEmail: email() } }, owner.testKey);
    const unstorable = await both(create, { input: { company: 'Nul \u0000 byte', contactEmail: email() } });
    expect(unstorable.status).toBe(400);
    expect(unstorable.body).toMatchObject({ errors: [{ extensions: { errorCode: 'parameter_invalid' } }] });

    // leadScore: 3 calls a minute for the account; the fourth and fifth are refused with 429 and Retry-After.
    const score = `query Score($id: ID!) { s: leadScore(id: $id) { score } }`;
    for (let i = 0; i < 3; i++) expect((await app.graphql(score, { id }, owner.testKey)).status).toBe(200);
    const limited = await both(score, { id });
    expect(limited).toMatchObject({ status: 429, retryAfter: '60', body: { errors: [{ extensions: { code: 'RATE_LIMITED' }, path: ['s'] }] } });
  });

  it('answers as Apollo does for another Accept, and runs the operation named in a document of two', async () => {
    const created = await app.graphql(`mutation { createLead(input: { company: "Named", contactEmail: "${email()}" }) { id } }`, undefined, owner.testKey);
    const id = (created.body as { data: { createLead: { id: string } } }).data.createLead.id;
    const query = `query One($id: ID!) { lead(id: $id) { company } } query Two { leads(filter: { limit: 1 }) { object } }`;
    const send = async (operationName: string, accept?: string) =>
      stable(
        await app.request('POST', '/graphql', {
          key: owner.testKey,
          headers: accept ? { accept } : {},
          body: { query, operationName, variables: operationName === 'One' ? { id } : {} },
        }),
      );
    for (const accept of ['application/graphql-response+json', undefined]) {
      for (const name of ['One', 'Two']) {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await send(name, accept));
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
        expect(answers[0].contentType).toBe(accept ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8');
      }
    }
    expect((await send('One')).body).toEqual({ data: { lead: { company: 'Named' } } });
    expect((await send('Two')).body).toEqual({ data: { leads: { object: 'list' } } });
    // An Accept Apollo refuses (406) is left to Apollo, on a known document too.
    const before = await repeatedSoFar();
    expect((await send('One', 'text/csv')).status).toBe(406);
    expect(await repeatedSoFar()).toBe(before);
  });

  it('keeps only short texts for the way around Apollo: a longer document is answered by Apollo every time', async () => {
    const padding = `# ${'x'.repeat(KNOWN_TEXT_LENGTH)}\n`;
    const answer = await thrice(`${padding}query Long { leads(filter: { limit: 1 }) { object } }`, () => ({}), owner.testKey, false);
    expect(answer).toMatchObject({ status: 200, body: { data: { leads: { object: 'list' } } } });
  });

  it("answers a restricted key's refusals alike (the permission plugin rewrites the document per request)", async () => {
    const key = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'deals only', parsePermissions('deals=read'))).secret;
    // A restricted key's document is rewritten per request, so it never skips Apollo.
    const refused = await thrice(
      `query Mixed($filter: LeadListInput) { leads(filter: $filter) { object } deals { object } }`,
      () => ({ filter: { limit: 1 } }),
      key,
      false,
    );
    expect(refused.body).toMatchObject({ data: { deals: { object: 'list' } }, errors: [{ extensions: { code: 'FORBIDDEN' }, path: ['leads'] }] });
  });
});
