import { GraphQLSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType } from 'graphql';
import type { ComplexityEstimator } from 'graphql-query-complexity';

const longest = (lengths: number[]): number => Math.max(1, ...lengths);

/**
 * The introspection lists of this schema and their longest length: `__Schema.types` is every
 * type, `__Type.fields` the most fields any type has, and so on. An introspection list is costed
 * like every other list: its selection times the most rows it can return (graphql-query-complexity
 * would otherwise count `types { fields { … } }` as if each list held one item, which let 3,000
 * aliased `__schema` answer 42 MB as one cheap request).
 */
function introspectionListLengths(schema: GraphQLSchema): Map<string, number> {
  const types = Object.values(schema.getTypeMap());
  const objectLike = types.filter((type) => isObjectType(type) || isInterfaceType(type));
  const fields = objectLike.flatMap((type) => Object.values(type.getFields()));
  const directives = schema.getDirectives();
  return new Map([
    ['__Schema.types', types.length],
    ['__Schema.directives', directives.length],
    ['__Type.fields', longest(objectLike.map((type) => Object.keys(type.getFields()).length))],
    ['__Type.interfaces', longest(objectLike.map((type) => type.getInterfaces().length))],
    [
      '__Type.possibleTypes',
      longest(types.filter((type) => isUnionType(type) || isInterfaceType(type)).map((type) => schema.getPossibleTypes(type as never).length)),
    ],
    ['__Type.enumValues', longest(types.filter(isEnumType).map((type) => type.getValues().length))],
    ['__Type.inputFields', longest(types.filter(isInputObjectType).map((type) => Object.keys(type.getFields()).length))],
    ['__Field.args', longest(fields.map((field) => field.args.length))],
    ['__Directive.args', longest(directives.map((directive) => directive.args.length))],
    ['__Directive.locations', longest(directives.map((directive) => directive.locations.length))],
  ]);
}

/** The estimator of introspection lists; other fields fall through to the next estimator. */
export function introspectionEstimator(schema: GraphQLSchema): ComplexityEstimator {
  const lengths = introspectionListLengths(schema);
  return ({ type, field, childComplexity }) => {
    const length = lengths.get(`${type.name}.${field.name}`);
    return length === undefined ? undefined : 1 + length * childComplexity;
  };
}
