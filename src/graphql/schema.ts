import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { VALIDATION_OPTIONS } from '../common/validation';
import { MODULES } from '../modules';
import { nullArguments } from './null-arguments';

/** Every module's resolvers. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- type-graphql takes resolver classes as Function
export const RESOLVERS = MODULES.flatMap((module) => module.resolvers ?? []) as [Function, ...Function[]];

/**
 * Builds the typed schema from the resolvers; class-validator runs on every input, with the
 * options of common/validation.ts. nullArguments runs before validation: an optional argument
 * sent as null is one left out.
 */
export function createSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    globalMiddlewares: [nullArguments],
    validate: VALIDATION_OPTIONS,
  });
}

/** The SDL committed as schema.graphql (sorted, so it diffs cleanly). */
export function printSortedSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
