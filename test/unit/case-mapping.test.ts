import {
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
} from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ApiError } from '../../src/common/api-error';
import { createSchema } from '../../src/app/schema';
import { camelToSnake, paramPath, restParam, snakeToCamel, toGraphQLInput } from '../../src/rest/case-mapping';
import { selectAll } from '../../src/rest/selection';

const LineItem = new GraphQLInputObjectType({
  name: 'TestLineItem',
  fields: { description: { type: GraphQLString }, quantity: { type: GraphQLInt }, unitPrice: { type: GraphQLFloat } },
});
const TestInput = new GraphQLInputObjectType({
  name: 'TestInput',
  fields: {
    dealId: { type: new GraphQLNonNull(GraphQLString) },
    lineItems: { type: new GraphQLList(new GraphQLNonNull(LineItem)) },
    stages: { type: new GraphQLList(GraphQLString) },
    minValue: { type: GraphQLFloat },
    includeClosed: { type: GraphQLBoolean },
    metadata: { type: GraphQLJSONObject },
  },
});

function apiError(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('name helpers', () => {
  it('maps camelCase and snake_case both ways', () => {
    const pairs: Array<[string, string]> = [
      ['contactEmail', 'contact_email'],
      ['scoreLabel', 'score_label'],
      ['createdAt', 'created_at'],
      ['uptimeS', 'uptime_s'],
      ['hasMore', 'has_more'],
      ['nextCursor', 'next_cursor'],
      ['company', 'company'],
      ['q', 'q'],
    ];
    for (const [camel, snake] of pairs) {
      expect(camelToSnake(camel)).toBe(snake);
      expect(snakeToCamel(snake)).toBe(camel);
    }
  });

  it('writes Stripe-style parameter paths', () => {
    expect(paramPath(['contact_email'])).toBe('contact_email');
    expect(paramPath(['metadata', 'plan'])).toBe('metadata[plan]');
    expect(paramPath(['line_items', 0, 'quantity'])).toBe('line_items[0][quantity]');
    expect(restParam('contactEmail')).toBe('contact_email');
    expect(restParam('lineItems.0.unitPrice')).toBe('line_items[0][unit_price]');
  });
});

describe('toGraphQLInput', () => {
  let schema: GraphQLSchema;
  let createInput: GraphQLInputType;
  let listInput: GraphQLInputType;
  beforeAll(async () => {
    schema = await createSchema();
    createInput = new GraphQLNonNull(schema.getType('LeadCreateInput') as GraphQLInputObjectType);
    listInput = schema.getType('LeadListInput') as GraphQLInputObjectType;
  });

  it('turns snake_case body keys into the GraphQL field names', () => {
    expect(toGraphQLInput({ company: 'Acme', contact_email: 'a@acme.test', contact_name: null, employees: 12 }, createInput, 'body')).toEqual({
      company: 'Acme',
      contactEmail: 'a@acme.test',
      contactName: null,
      employees: 12,
    });
  });

  it("leaves metadata (a JSONObject) exactly as sent: keys are the client's", () => {
    const metadata = { Plan_Tier: 'gold', crm_id: '42', camelKey: 'x', 'with space': 'y' };
    const out = toGraphQLInput({ company: 'A', contact_email: 'a@a.test', metadata }, createInput, 'body') as Record<string, unknown>;
    expect(out.metadata).toEqual({ Plan_Tier: 'gold', crm_id: '42', camelKey: 'x', 'with space': 'y' });
    const nested = { deal_id: 'deal_1', metadata: { nested_key: { inner_key: 'v' } } };
    expect((toGraphQLInput(nested, TestInput, 'body') as Record<string, unknown>).metadata).toEqual({ nested_key: { inner_key: 'v' } });
  });

  it('refuses a key the type does not have with parameter_unknown naming it', () => {
    for (const key of ['score', 'id', 'created_at', 'livemode', 'bogus']) {
      const error = apiError(() => toGraphQLInput({ company: 'A', contact_email: 'a@a.test', [key]: 1 }, createInput, 'body'));
      expect(error.errorCode).toBe('parameter_unknown');
      expect(error.param).toBe(key);
      expect(error.status).toBe(400);
      expect(error.message).toContain(key);
    }
  });

  it('refuses the camelCase spelling of a REST field (REST names are snake_case)', () => {
    const error = apiError(() => toGraphQLInput({ company: 'A', contactEmail: 'a@a.test' }, createInput, 'body'));
    expect(error.errorCode).toBe('parameter_unknown');
    expect(error.param).toBe('contactEmail');
  });

  it('names an unknown key inside a nested list with its full path', () => {
    const error = apiError(() => toGraphQLInput({ deal_id: 'd', line_items: [{ quantity: 1 }, { quantity: 2, colour: 'red' }] }, TestInput, 'body'));
    expect(error.errorCode).toBe('parameter_unknown');
    expect(error.param).toBe('line_items[1][colour]');
  });

  it('maps nested objects in lists', () => {
    expect(toGraphQLInput({ deal_id: 'd', line_items: [{ description: 'Seat', unit_price: 9.5, quantity: 3 }] }, TestInput, 'body')).toEqual({
      dealId: 'd',
      lineItems: [{ description: 'Seat', unitPrice: 9.5, quantity: 3 }],
    });
  });

  it('converts query-string text to numbers and booleans where the type says so', () => {
    expect(toGraphQLInput({ limit: '5', min_score: '10', max_employees: '250', status: 'new', q: '42' }, listInput, 'query')).toEqual({
      limit: 5,
      minScore: 10,
      maxEmployees: 250,
      status: 'new',
      q: '42', // a String field stays text even when it looks like a number
    });
    expect(toGraphQLInput({ deal_id: 'd', min_value: '1500.50', include_closed: 'true' }, TestInput, 'query')).toEqual({
      dealId: 'd',
      minValue: 1500.5,
      includeClosed: true,
    });
    expect(toGraphQLInput({ deal_id: 'd', min_value: '-3', include_closed: 'false' }, TestInput, 'query')).toEqual({
      dealId: 'd',
      minValue: -3,
      includeClosed: false,
    });
  });

  it('leaves text that is not a number as text, for GraphQL coercion to reject with the param', () => {
    expect(toGraphQLInput({ limit: 'ten', min_score: '1e3' }, listInput, 'query')).toEqual({ limit: 'ten', minScore: '1e3' });
    expect(toGraphQLInput({ deal_id: 'd', include_closed: 'yes' }, TestInput, 'query')).toEqual({ dealId: 'd', includeClosed: 'yes' });
  });

  it('does not convert body strings: JSON bodies carry their own types', () => {
    expect(toGraphQLInput({ company: 'A', contact_email: 'a@a.test', employees: '12' }, createInput, 'body')).toEqual({
      company: 'A',
      contactEmail: 'a@a.test',
      employees: '12',
    });
  });

  it('splits a comma list in the query string into a GraphQL list', () => {
    expect(toGraphQLInput({ deal_id: 'd', stages: 'proposal, negotiation,,closed_won' }, TestInput, 'query')).toEqual({
      dealId: 'd',
      stages: ['proposal', 'negotiation', 'closed_won'],
    });
    expect(toGraphQLInput({ deal_id: 'd', stages: 'proposal' }, TestInput, 'query')).toEqual({ dealId: 'd', stages: ['proposal'] });
    // A body keeps a string as a string (GraphQL coerces it into a one-item list).
    expect(toGraphQLInput({ deal_id: 'd', stages: 'a,b' }, TestInput, 'body')).toEqual({ dealId: 'd', stages: 'a,b' });
  });

  it('passes null and non-object values through for coercion to judge', () => {
    expect(toGraphQLInput(null, createInput, 'body')).toBeNull();
    expect(toGraphQLInput(undefined, listInput, 'query')).toBeUndefined();
    expect(toGraphQLInput([1, 2], listInput, 'body')).toEqual([1, 2]);
    expect(toGraphQLInput('text', listInput, 'body')).toBe('text');
  });
});

describe('selectAll with REST names', () => {
  let selection: string;
  beforeAll(async () => {
    const schema = await createSchema();
    selection = selectAll(schema.getType('LeadList') as GraphQLObjectType, { restNames: true });
  });

  it('aliases every field to its snake_case name, nested objects and lists included', () => {
    expect(selection).toMatch(/^\{ object data \{ id object created_at: createdAt updated_at: updatedAt .* \} has_more: hasMore next_cursor: nextCursor \}$/);
    expect(selection).toContain(' contact_email: contactEmail ');
    expect(selection).toContain(' score_label: scoreLabel ');
  });

  it('leaves metadata a leaf, so its keys stay exactly as the client sent them', () => {
    expect(selection).toMatch(/ metadata[ }]/);
    expect(selection).not.toContain('metadata {');
  });
});
