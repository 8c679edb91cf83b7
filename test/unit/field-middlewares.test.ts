import { graphql, GraphQLInt, GraphQLList, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { applyFieldMiddlewares } from '../../src/graphql/field-middlewares';

/**
 * The schema's middlewares (the permission check, null arguments) run around the fields they
 * concern: root fields, fields with arguments, fields that declare a permission; not around every
 * field of every row, as type-graphql's global middlewares did. In order, before the resolver, and
 * a middleware that throws stops the field.
 */
describe('applyFieldMiddlewares', () => {
  const row = new GraphQLObjectType({
    name: 'Row',
    fields: {
      plain: { type: GraphQLString },
      getter: { type: GraphQLString, resolve: (source: { plain: string }) => `${source.plain}!` },
      withArgument: { type: GraphQLString, args: { n: { type: GraphQLInt } }, resolve: (_source, args: { n?: number }) => `n=${args.n ?? 'none'}` },
      guarded: { type: GraphQLString, extensions: { permission: 'rows:secret' }, resolve: () => 'secret' },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        rows: {
          type: new GraphQLObjectType({ name: 'Page', fields: { data: { type: new GraphQLList(row) } } }),
          resolve: () => ({ data: [{ plain: 'a' }, { plain: 'b' }] }),
        },
      },
    }),
  });
  const seen: string[] = [];
  const record =
    (name: string): MiddlewareFn<never> =>
    ({ info }, next) => {
      seen.push(`${name}:${info.parentType.name}.${info.fieldName}`);
      return next();
    };
  const clearNulls: MiddlewareFn<never> = ({ args }, next) => {
    for (const key of Object.keys(args)) if (args[key] === null) delete args[key];
    return next();
  };
  applyFieldMiddlewares(schema, [record('first'), record('second'), clearNulls]);

  beforeEach(() => seen.splice(0));

  it('runs them, in order, around root fields, fields with arguments and fields with a permission only', async () => {
    const result = await graphql({ schema, source: '{ rows { data { plain getter withArgument(n: null) guarded } } }' });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      rows: { data: [0, 1].map((i) => ({ plain: 'ab'[i], getter: `${'ab'[i]}!`, withArgument: 'n=none', guarded: 'secret' })) },
    });
    const perRow = ['first:Row.withArgument', 'second:Row.withArgument', 'first:Row.guarded', 'second:Row.guarded'];
    expect(seen).toEqual(['first:Query.rows', 'second:Query.rows', ...perRow, ...perRow]);
    expect(seen.some((entry) => /Row\.(plain|getter)|Page\.data/.test(entry))).toBe(false);
  });

  it('stops the field when a middleware throws, before its resolver runs', async () => {
    const refusing = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { secret: { type: GraphQLString, resolve: () => 'leaked' } } }),
    });
    applyFieldMiddlewares(refusing, [
      () => {
        throw new Error('refused');
      },
    ]);
    const result = await graphql({ schema: refusing, source: '{ secret }' });
    expect(result.data).toEqual({ secret: null });
    expect(result.errors?.map((error) => error.message)).toEqual(['refused']);
  });
});
