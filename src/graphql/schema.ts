import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { HealthResolver } from '../modules/health/health.resolver';
import { LeadResolver } from '../modules/leads/lead.resolver';

export const RESOLVERS = [HealthResolver, LeadResolver] as const;

/** Builds the typed schema from the resolvers; class-validator runs on every input. */
export function createSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    validate: { forbidUnknownValues: false, stopAtFirstError: true },
  });
}

/** The SDL committed as schema.graphql (sorted, so it diffs cleanly). */
export function printSortedSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
