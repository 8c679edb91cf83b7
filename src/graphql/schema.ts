import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { HealthResolver } from '../modules/health/health.resolver';
import { LeadResolver } from '../modules/leads/lead.resolver';
import { DealResolver } from '../modules/deals/deal.resolver';
import { IntegrationResolver } from '../modules/integrations/integration.resolver';
import { WebhookResolver } from '../modules/webhooks/webhook.resolver';
import { EventResolver } from '../events/event.resolver';
import { DealProposalsResolver, ProposalResolver } from '../modules/proposals/proposal.resolver';
import { AgentResolver } from '../modules/agents/agent.resolver';
import { ScoringResolver } from '../modules/scoring/scoring.resolver';
import { nullArguments } from './null-arguments';

export const RESOLVERS = [HealthResolver, LeadResolver, DealResolver, IntegrationResolver, WebhookResolver, EventResolver, ProposalResolver, DealProposalsResolver, AgentResolver, ScoringResolver] as const;

/**
 * Builds the typed schema from the resolvers; class-validator runs on every input. type-graphql
 * turns on `skipMissingProperties` unless told otherwise, which skips every rule for a null value:
 * an update's `company: null` would then reach the database. Optional fields say so with
 * @IsOptional / @NotNull, so null and undefined are checked like any other value. nullArguments
 * runs before validation: an optional argument sent as null is one left out.
 */
export function createSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    globalMiddlewares: [nullArguments],
    validate: { forbidUnknownValues: false, stopAtFirstError: true, skipMissingProperties: false },
  });
}

/** The SDL committed as schema.graphql (sorted, so it diffs cleanly). */
export function printSortedSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
