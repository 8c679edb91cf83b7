import { KeyType } from '../../src/modules/accounts/api-key.entity';
import { ApiKeyService } from '../../src/modules/accounts/api-key.service';
import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * /graphql runs a document it has seen before compiled with graphql-jit (src/graphql/compiled-execution.ts).
 * The answer must not depend on which executor ran it: each document below is sent three times
 * (the first by graphql-js, the later ones compiled) and every answer, status and body, errors
 * included, is the same but for what changes by design (new ids, times).
 */
describe('/graphql: a repeated document answers as its first sending did', () => {
  let app: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createAccount();
  });
  afterAll(() => app.close());

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
  });
  const thrice = async (query: string, variables: () => Record<string, unknown>, key = owner.testKey) => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(stable(await app.graphql(query, variables(), key)));
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

  it("answers a restricted key's refusals alike (the permission plugin rewrites the document per request)", async () => {
    const key = (await new ApiKeyService(app.orm.em.fork()).create(owner.account, KeyType.test, 'deals only', parsePermissions('deals=read'))).secret;
    const refused = await thrice(
      `query Mixed($filter: LeadListInput) { leads(filter: $filter) { object } deals { object } }`,
      () => ({ filter: { limit: 1 } }),
      key,
    );
    expect(refused.body).toMatchObject({ data: { deals: { object: 'list' } }, errors: [{ extensions: { code: 'FORBIDDEN' }, path: ['leads'] }] });
  });
});
