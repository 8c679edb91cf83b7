import { camelToSnake } from '../common/case';
import { GraphQLField, GraphQLObjectType, GraphQLOutputType, getNamedType, isObjectType } from 'graphql';

/**
 * The fields of a type that REST shows: every field that takes no required argument, `id` and
 * `object` first as in every Stripe object, the rest in declared order. Fields marked
 * `@Extensions({ rest: false })` (GraphQL-only views such as history or summaries) are left out.
 */
export function restFields(type: GraphQLObjectType): Array<GraphQLField<unknown, unknown>> {
  const first = (name: string) => (name === 'id' ? 0 : name === 'object' ? 1 : 2);
  return Object.values(type.getFields())
    .filter((field) => !field.args.some((arg) => arg.type.toString().endsWith('!')))
    .filter((field) => field.extensions?.rest !== false)
    .sort((a, b) => first(a.name) - first(b.name));
}

/**
 * The selection set a REST response needs: every REST field of the type, recursing into nested
 * objects. With `restNames`, each field is aliased to its REST name (`contact_email: contactEmail`),
 * so the execution's own result is the REST answer's shape, with no renaming pass after it (opaque
 * JSON such as metadata is a leaf, so its keys stay the client's).
 */
export function selectAll(type: GraphQLOutputType, options: { restNames?: boolean } = {}, depth = 0): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  if (depth > 4) throw new Error(`REST selection of ${named.name} is too deep`);
  const parts = restFields(named).map((field) => {
    const rest = options.restNames ? camelToSnake(field.name) : field.name;
    const name = rest === field.name ? field.name : `${rest}: ${field.name}`;
    const nested = selectAll(field.type, options, depth + 1);
    return nested ? `${name} ${nested}` : name;
  });
  return `{ ${parts.join(' ')} }`;
}
