import fc from 'fast-check';
import {
  GraphQLField,
  GraphQLInputType,
  GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
import { camelToSnake } from '../../src/common/case';
import { selectAll } from '../../src/rest/selection';
import { FixtureIds, malformedId, plausibleValue } from './fuzz-plausible';
import { hostileValue } from './fuzz-values';

/**
 * GraphQL fuzzing driven by the schema itself, the way generated clients call it: every root field
 * (REST or GraphQL-only) and every field that takes arguments one level down (`Agent.runs`,
 * `Deal.proposals`…), each argument a variable, with values generated from the argument's own
 * input type: nulls and omissions anywhere, plausible values mostly, hostile ones sometimes. A
 * field added later is fuzzed too.
 */

export interface SchemaOperation {
  /** `Query.leads`, `Agent.runs`… */
  name: string;
  document: string;
  variables: fc.Arbitrary<Record<string, unknown>>;
}

const KINDS = ['lead', 'deal', 'proposal', 'agent', 'webhook', 'integration', 'event'];

/** The fixture kind (`leads`) an operation's ids belong to, from its name (`updateLead` → leads). */
function kindOf(fieldName: string): string | undefined {
  const lower = fieldName.toLowerCase();
  const kind = KINDS.find((each) => lower.includes(each));
  return kind && `${kind}s`;
}

/** Operations that use up what they are given get ids that name nothing, so the fixtures stay. */
const destroys = (fieldName: string) => /^(delete|disconnect)/.test(fieldName);

/** A value of an input type: plausible mostly, null or left out often (nullable or not), hostile sometimes. */
function valueOf(type: GraphQLInputType, name: string, fixtures: FixtureIds, idKind: string | undefined, noneId: boolean, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) {
    return fc.oneof({ weight: 14, arbitrary: valueOf(type.ofType, name, fixtures, idKind, noneId, depth) }, { weight: 1, arbitrary: fc.constant(null) });
  }
  let value: fc.Arbitrary<unknown>;
  if (isListType(type)) {
    value = fc.array(valueOf(type.ofType, name, fixtures, idKind, noneId, depth + 1), { maxLength: 3 });
  } else if (isEnumType(type)) {
    value = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...type.getValues().map((v) => v.value as string)) },
      { weight: 1, arbitrary: fc.constantFrom('not_a_value', '', 'PROSPECTING') },
    );
  } else if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    // Every field may be left out; nested inputs stop after a few levels.
    value =
      depth > 3
        ? fc.constant({})
        : fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, f.name, fixtures, idKind, noneId, depth + 1)])), { requiredKeys: [] });
  } else if (isScalarType(type) && type.name === 'ID' && name === 'id') {
    const none = `${(idKind ?? 'x').replace(/s$/, '')}_00000000000000000000000000`;
    value =
      noneId || !idKind || !fixtures[idKind]
        ? malformedId({ none })
        : fc.oneof({ weight: 4, arbitrary: fc.constant(fixtures[idKind]) }, { weight: 1, arbitrary: malformedId(fixtures) });
  } else {
    value = plausibleValue(camelToSnake(name), type, fixtures, false);
  }
  return fc.oneof({ weight: 10, arbitrary: value }, { weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: hostileValue });
}

function variablesOf(
  args: ReadonlyArray<{ name: string; type: GraphQLInputType }>,
  fixtures: FixtureIds,
  idKind: string | undefined,
  noneId: boolean,
): fc.Arbitrary<Record<string, unknown>> {
  const model = Object.fromEntries(args.map((arg) => [arg.name, valueOf(arg.type, arg.name, fixtures, idKind, noneId)]));
  return fc.record(model, { requiredKeys: [] });
}

const definitions = (args: ReadonlyArray<{ name: string; type: GraphQLInputType }>, prefix = '') =>
  args.map((a) => `$${prefix}${a.name}: ${a.type.toString()}`);
const passing = (args: ReadonlyArray<{ name: string }>, prefix = '') => args.map((a) => `${a.name}: $${prefix}${a.name}`).join(', ');

/** Every operation of the schema to fuzz: root fields, and fields with arguments under the root `x(id: ID!)` getters. */
export function schemaOperations(schema: GraphQLSchema, fixtures: FixtureIds): SchemaOperation[] {
  const operations: SchemaOperation[] = [];
  for (const [kind, root] of [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
  ] as const) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const selection = selectAll(field.type);
      const defs = definitions(field.args);
      operations.push({
        name: `${root!.name}.${field.name}`,
        document: `${kind} Fuzz${defs.length ? `(${defs.join(', ')})` : ''} { ${field.name}${field.args.length ? `(${passing(field.args)})` : ''} ${selection} }`,
        variables: variablesOf(field.args, fixtures, kindOf(field.name), destroys(field.name)),
      });
    }
  }
  // Fields with arguments one level down, reached through their type's root getter (`agent(id:)`).
  for (const getter of Object.values(schema.getQueryType()?.getFields() ?? {})) {
    const type = getNamedType(getter.type);
    if (!isObjectType(type) || getter.args.length !== 1 || getter.args[0].name !== 'id') continue;
    const idKind = kindOf(getter.name);
    for (const field of Object.values(type.getFields()).filter((f: GraphQLField<unknown, unknown>) => f.args.length > 0)) {
      const defs = ['$id: ID!', ...definitions(field.args, 'a_')];
      operations.push({
        name: `${type.name}.${field.name}`,
        document: `query Fuzz(${defs.join(', ')}) { ${getter.name}(id: $id) { id ${field.name}(${passing(field.args, 'a_')}) ${selectAll(field.type)} } }`,
        variables: fc
          .tuple(
            idKind && fixtures[idKind] ? fc.constant(fixtures[idKind]) : malformedId(fixtures),
            variablesOf(
              field.args.map((a) => ({ ...a, name: `a_${a.name}` })),
              fixtures,
              undefined,
              false,
            ),
          )
          .map(([id, rest]) => ({ id, ...rest })),
      });
    }
  }
  return operations;
}

/** Root fields that read, with literal arguments, for documents of many aliases. */
const READS = [
  'health { status }',
  'leads(filter: { limit: 100 }) { data { id } }',
  'deals(filter: { limit: 5 }) { hasMore }',
  'pipelineSummary { stage count }',
  'events { hasMore }',
  '__schema { types { name } }',
  '__typename',
];

export interface AliasDocument {
  query: string;
  /** Root fields it selects, aliases included. */
  roots: number;
}

/** Documents of many aliased root fields, directly or through fragments: the count decides whether they run. */
export const aliasDocument: fc.Arbitrary<AliasDocument> = fc
  .record({
    roots: fc.constantFrom(1, 2, 24, 25, 26, 60, 400),
    field: fc.constantFrom(...READS),
    viaFragment: fc.boolean(),
  })
  .map(({ roots, field, viaFragment }) => {
    const aliases = Array.from({ length: roots }, (_, i) => `a${i}: ${field}`).join(' ');
    return { roots, query: viaFragment ? `query { ...Many } fragment Many on Query { ${aliases} }` : `query { ${aliases} }` };
  });
