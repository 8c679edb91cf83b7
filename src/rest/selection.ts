import { GraphQLObjectType, GraphQLOutputType, getNamedType, isObjectType } from 'graphql';

/**
 * The selection set a REST response needs: every field of the type that takes no arguments,
 * recursing into nested objects. Fields marked `@Extensions({ rest: false })` (GraphQL-only views
 * such as history or summaries) are left out.
 */
export function selectAll(type: GraphQLOutputType, depth = 0): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  if (depth > 4) throw new Error(`REST selection of ${named.name} is too deep`);
  const parts: string[] = [];
  const fields = Object.values((named as GraphQLObjectType).getFields());
  // `id` and `object` lead, as in every Stripe object; the rest keep their declared order.
  const first = (name: string) => (name === 'id' ? 0 : name === 'object' ? 1 : 2);
  fields.sort((a, b) => first(a.name) - first(b.name));
  for (const field of fields) {
    if (field.args.some((arg) => arg.type.toString().endsWith('!'))) continue;
    if (field.extensions?.rest === false) continue;
    const nested = selectAll(field.type, depth + 1);
    parts.push(nested ? `${field.name} ${nested}` : field.name);
  }
  return `{ ${parts.join(' ')} }`;
}
