import fc from 'fast-check';
import { GraphQLInputObjectType, GraphQLInputType, isEnumType, isInputObjectType, isListType, isNonNullType } from 'graphql';
import { camelToSnake } from '../../src/common/case';
import { EVENTS } from '../../src/app/modules';
import { CREDENTIALS_BY_PROVIDER } from '../../src/modules/integrations/integration-credentials';
import { PROVIDERS_BY_TYPE } from '../../src/modules/integrations/integration.entity';
import { hostileValue, NASTY_STRINGS, nastyNumber, nastyString, toJsonText } from './fuzz-values';

/**
 * Plausible values for fuzzing, by REST field name and GraphQL input type: what a client would send,
 * so that requests get past validation and reach the services (a field added later gets them too).
 */

/** Ids of one object of each kind (keyed by the path segment: leads, deals…), made before fuzzing. */
export type FixtureIds = Record<string, string>;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Ids of the right shape that name nothing, of wrong shapes, and of other kinds. */
export function malformedId(fixtures: FixtureIds): fc.Arbitrary<string> {
  const prefixes = ['lead', 'deal', 'prop', 'agent', 'int', 'wh', 'evt', 'req', 'acct', 'key', 'cosell', ''];
  const body = fc.string({ unit: fc.constantFrom(...CROCKFORD), minLength: 26, maxLength: 26 });
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...prefixes), body).map(([prefix, b]) => `${prefix}_${b}`) },
    { weight: 2, arbitrary: fc.constantFrom(...Object.values(fixtures)) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.values(fixtures)).map((id) => id.toLowerCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.values(fixtures)).map((id) => `${id}x`) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.values(fixtures)).map((id) => ` ${id}`) },
    { weight: 1, arbitrary: fc.constantFrom('lead_ILOU0000000000000000000000', 'lead_', 'lead', '_', '0', '-1', 'null', 'lead_' + 'Z'.repeat(1000)) },
    { weight: 2, arbitrary: nastyString },
  );
}

/**
 * Cursors: garbage, and well-formed ones (base64url JSON) carrying values no page ever wrote. Given
 * the sort the request uses, most crafted cursors are made for it, so they get past the sort check
 * and their value reaches the query.
 */
export function cursorArb(sortKey?: string): fc.Arbitrary<string> {
  const crafted = fc
    .record(
      {
        s: sortKey
          ? fc.oneof({ weight: 4, arbitrary: fc.constant(sortKey) }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...SORT_KEYS), nastyString) })
          : fc.oneof(fc.constantFrom(...SORT_KEYS), nastyString),
        v: fc.oneof(
          nastyNumber,
          nastyString,
          fc.constantFrom(
            '2026-11-22T03:18:04.361Z',
            '0000-01-01T00:00:00.000Z',
            '0001-01-01T00:00:00.000Z',
            '9999-12-31T23:59:59.999Z',
            '2026-02-30T00:00:00.000Z',
            '2026-11-22',
            '0000-01-01',
            '2026-13-45',
            '+275760-09-13T00:00:00.000Z',
            null,
          ),
          fc.constantFrom([], {}, true),
        ),
        i: fc.oneof(
          fc.string({ unit: fc.constantFrom(...CROCKFORD), minLength: 26, maxLength: 26 }).map((b) => `lead_${b}`),
          nastyString,
        ),
      },
      { requiredKeys: sortKey ? ['s', 'v', 'i'] : [] },
    )
    .map((payload) => Buffer.from(toJsonText(payload)).toString('base64url'));
  return fc.oneof(
    { weight: 4, arbitrary: crafted },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.base64String({ maxLength: 80 }) },
    { weight: 1, arbitrary: fc.constantFrom('', 'null', 'e30', 'W10', 'bnVsbA', '!!!', 'a'.repeat(1001)) },
  );
}

const SORTS = ['created_at', 'score', 'company', 'employees', 'value', 'expected_close_date'];
export const SORT_KEYS = [...SORTS, ...SORTS.map((s) => `-${s}`)];

const day = fc.date({ min: new Date('1990-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const dateTime = fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
const money = fc.integer({ min: 0, max: 10_000_000 }).map((cents) => cents / 100);
const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((s) => /\S/.test(s));
const email = fc.uuid().map((uuid) => `fuzz-${uuid.slice(0, 13)}@example.com`);
const badUrl = fc.constantFrom(
  'https://hooks.example.com/sales',
  'http://hooks.example.com:8080/a?b=c',
  'https://example.org/',
  'http://127.0.0.1/hook',
  'http://169.254.169.254/latest/meta-data',
  'http://[::1]:9/x',
  'http://10.0.0.1/',
  'http://internal.example.com/x',
  'http://gone.invalid/x',
  'ftp://example.com/',
  'https://user:pass@example.com/',
  'https://exa mple.com/',
  '//example.com',
  'example.com',
  'http://0x7f000001/',
  'http://[::ffff:127.0.0.1]/',
  'https://xn--nxasmq6b.example/',
);
const url = fc.oneof({ weight: 3, arbitrary: fc.webPath().map((path) => `https://hooks.example.com${path}`) }, { weight: 2, arbitrary: badUrl });

/**
 * A plausible value for a field, by its REST name and GraphQL type: mostly values a client would
 * send (so requests get past validation and reach the services), sometimes the edge of the range.
 */
export function plausibleValue(name: string, type: GraphQLInputType, fixtures: FixtureIds, fromQuery: boolean): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return plausibleValue(name, type.ofType, fixtures, fromQuery);
  if (isListType(type)) {
    const item = plausibleValue(name, type.ofType, fixtures, fromQuery);
    if (name === 'events') return fc.oneof(fc.uniqueArray(fc.constantFrom(...EVENTS.subscribable), { minLength: 1, maxLength: 4 }), fc.constant(['*']));
    return fc.array(item, { minLength: 1, maxLength: 3 });
  }
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.value as string));
  if (isInputObjectType(type)) return plausibleObject(type, fixtures, fromQuery);
  const kind = name.replace(/^(min|max)_/, '');
  switch (type.name) {
    case 'Int':
      if (name === 'limit') return fc.integer({ min: 1, max: 100 });
      if (/score/.test(name)) return fc.integer({ min: 0, max: 100 });
      if (/days/.test(name)) return fc.integer({ min: 1, max: 365 });
      return fc.integer({ min: 0, max: 100_000 });
    case 'Float':
      if (/percent/.test(name)) return fc.integer({ min: 0, max: 100_000 }).map((n) => n / 1000);
      if (name === 'quantity') return fc.integer({ min: 1, max: 1_000_000 }).map((n) => n / 1000);
      return money;
    case 'Boolean':
      return fc.boolean();
    case 'DateTimeISO':
      return dateTime;
    case 'JSONObject':
      if (name === 'metadata') return fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 3 });
      if (name === 'config') return agentConfig;
      if (name === 'credentials') return fc.record({ access_token: fc.stringMatching(/^pat-[a-z0-9-]{10,30}$/) });
      return fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 3 });
    default:
      break;
  }
  if (type.name === 'ID' || /_id$/.test(name)) {
    const owner = `${name.replace(/_id$/, '')}s`;
    return fixtures[owner] ? fc.constant(fixtures[owner]) : malformedId(fixtures);
  }
  if (/email/.test(kind)) return email;
  if (/url|website/.test(kind)) return url;
  if (/date/.test(kind)) return day;
  if (kind === 'currency') return fc.constantFrom('USD', 'EUR', 'JPY', 'GBP', 'CHF');
  if (kind === 'sort') return fc.constantFrom(...SORT_KEYS);
  if (kind === 'cursor') return cursorArb();
  if (kind === 'window') return fc.constantFrom('24h', '7d', '30d');
  if (kind === 'q') return fc.oneof(text, fc.constantFrom('%', '_', '\\', 'example'));
  return fromQuery ? fc.oneof(text, fc.constantFrom(...NASTY_STRINGS)) : text;
}

/** An input object with every required field and some optional ones, in REST (snake_case) names. */
export function plausibleObject(type: GraphQLInputObjectType, fixtures: FixtureIds, fromQuery = false): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.values(type.getFields());
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of fields) model[camelToSnake(field.name)] = plausibleValue(camelToSnake(field.name), field.type, fixtures, fromQuery);
  const required = fields.filter((f) => isNonNullType(f.type)).map((f) => camelToSnake(f.name));
  return fc.record(model, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>;
}

/**
 * Valid connect bodies: a provider of the type, with exactly its credential fields. A compatible
 * model server's base_url is `modelServerUrl` (the test app's fake), since no setting sends it elsewhere.
 */
export function integrationBody(modelServerUrl: string): fc.Arbitrary<Record<string, unknown>> {
  const valueFor: Record<string, fc.Arbitrary<string>> = {
    text: fc.stringMatching(/^[A-Za-z0-9]{4,20}$/),
    secret: fc.stringMatching(/^[A-Za-z0-9_-]{12,40}$/),
    token: fc.stringMatching(/^[A-Za-z0-9_-]{12,40}$/),
    header: fc.stringMatching(/^[A-Za-z0-9-]{4,40}$/),
    https_url: fc.constantFrom('https://acme.my.salesforce.com', 'https://acme.halopsa.com'),
    hostname: fc.constantFrom('api-na.myconnectwise.net', 'api-eu.myconnectwise.net'),
    email: fc.constantFrom('api-user@acme.example', 'sync@example.com'),
    guid: fc.uuid(),
    user_principal_name: fc.constantFrom('sales@contoso.com', "o'neil.j@contoso.onmicrosoft.com"),
    http_url: fc.constantFrom(modelServerUrl, `${modelServerUrl}/`),
    deployment_name: fc.constantFrom('gpt-4o-mini', 'prod-chat_1.0'),
  };
  const pairs = Object.entries(PROVIDERS_BY_TYPE).flatMap(([type, providers]) => (providers as readonly string[]).map((provider) => [type, provider] as const));
  return fc.constantFrom(...pairs).chain(([type, provider]) => {
    const fields = CREDENTIALS_BY_PROVIDER[provider as keyof typeof CREDENTIALS_BY_PROVIDER].fields;
    const credentials = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueFor[f.kind]])));
    // A compatible model server has no default model: its connect names one.
    const settings = provider === 'openai_compatible' ? fc.constant({ model: 'llama3.1:8b' }) : fc.constant(undefined);
    return fc.record(
      { type: fc.constant(type), provider: fc.constant(provider), name: fc.option(text, { nil: undefined }), credentials, settings },
      { requiredKeys: ['type', 'provider', 'credentials', 'settings'] },
    );
  });
}

/** Agent configs of each type, valid and not. */
export const agentConfig: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record(
    {
      qualify_at: fc.integer({ min: 20, max: 100 }),
      disqualify_below: fc.integer({ min: 0, max: 20 }),
      open_deal: fc.boolean(),
      deal_stage: fc.constantFrom('prospecting', 'qualification'),
      deal_value: money,
    },
    { requiredKeys: [] },
  ),
  fc.record({
    idle_days: fc.dictionary(
      fc.constantFrom('prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'x'),
      fc.oneof(fc.integer({ min: 1, max: 365 }), nastyNumber),
      { maxKeys: 3 },
    ),
  }),
  fc.record(
    {
      valid_days: fc.integer({ min: 1, max: 365 }),
      discount_percent: fc.integer({ min: 0, max: 100 }),
      tax_percent: fc.integer({ min: 0, max: 100 }),
      notes: fc.option(text),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(nastyString, hostileValue, { maxKeys: 3 }),
);

/**
 * Custom field definitions (issue 68): every type, with options where the type has them, unique
 * where it may be; keys snake_case with a random tail (so most are new), sometimes a built-in name.
 */
export const fieldBody: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    object_type: fc.constantFrom('lead', 'deal'),
    key: fc.oneof(
      { weight: 9, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{3,12}$/) },
      { weight: 1, arbitrary: fc.constantFrom('company', 'owner_id', 'fields', 'stage') },
    ),
    label: text,
    type: fc.constantFrom('text', 'long_text', 'number', 'money', 'date', 'datetime', 'boolean', 'select', 'multi_select', 'url', 'email', 'phone', 'member'),
    required: fc.boolean(),
    description: fc.option(text, { nil: undefined }),
    options: fc
      .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), { minLength: 1, maxLength: 4 })
      .map((values) => values.map((value) => ({ value, label: value.toUpperCase() }))),
    unique: fc.boolean(),
  })
  .map(({ options, unique, ...field }) => ({
    ...field,
    ...(field.type === 'select' || field.type === 'multi_select' ? { options } : {}),
    ...(['text', 'number', 'email', 'phone', 'url', 'date'].includes(field.type) ? { unique } : {}),
  }));
