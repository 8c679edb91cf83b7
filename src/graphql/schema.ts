import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { permissionCheck, undeclaredPermissions } from '../auth/permission';
import { VALIDATION_OPTIONS } from '../common/validation';
import { applyFieldMiddlewares } from './field-middlewares';
import { nullArguments } from './null-arguments';
import { rootFieldSlot } from './root-field-slot';

/**
 * Builds the typed schema from the resolvers; class-validator runs on every input, with the
 * options of common/validation.ts. permissionCheck runs first on every field it concerns (a restricted key's refusal wins
 * over a bad argument); a root field then waits for its account's slot (root-field-slot.ts); nullArguments runs before validation: an optional argument sent as null
 * is one left out. A root field without a declared permission stops the build.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql takes resolver classes as Function
export async function buildApiSchema(resolvers: readonly [Function, ...Function[]]): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    resolvers,
    validate: VALIDATION_OPTIONS,
  });
  // Not type-graphql's globalMiddlewares, which wrap every field of every row (field-middlewares.ts).
  applyFieldMiddlewares(schema, [permissionCheck, rootFieldSlot, nullArguments]);
  const undeclared = undeclaredPermissions(schema);
  if (undeclared.length) throw new Error(`root fields without @RequiresPermission (src/auth/permission.ts): ${undeclared.join(', ')}`);
  return schema;
}

/** The SDL committed as schema.graphql (sorted, so it diffs cleanly). */
export function printSortedSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
