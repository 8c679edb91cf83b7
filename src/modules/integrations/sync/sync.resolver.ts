import type { ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { Arg, Ctx, Extensions, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../../auth/permission';
import type { RequestContext } from '../../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../../graphql/checks/cost-limit';
import { OperationLimited } from '../../../limits/operation-limit';
import { Integration } from '../integration.entity';
import { IntegrationUpdateInput, SyncRunListInput } from '../integration.inputs';
import { SyncRunList } from '../integration.types';
import { SyncFailure, SyncRun } from './sync.entities';
import { MAX_FAILURES_READ } from './sync.service';

const failuresComplexity = ({ args, childComplexity }: ComplexityEstimatorArgs): number =>
  1 + Math.min((args.limit as number | undefined) ?? MAX_FAILURES_READ, MAX_FAILURES_READ) * childComplexity;

/** Changing an integration, and its sync runs (logic in IntegrationService and SyncService). */
@Resolver(() => SyncRun)
export class SyncResolver {
  @RequiresPermission('integrations:write')
  @Mutation(() => Integration, {
    complexity: MUTATION_COST,
    description:
      "Changes the name or the settings (stage_map: every stage mapped; a PSA's delivery_record; ConnectWise's sales_rep). A disconnected integration is 409.",
  })
  updateIntegration(@Arg('id', () => ID) id: string, @Arg('input', () => IntegrationUpdateInput) input: IntegrationUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.integrations.update(id, input);
  }

  @RequiresPermission('integrations:write')
  @Mutation(() => SyncRun, {
    complexity: MUTATION_COST,
    description:
      "Starts a sync run now: from a CRM, pulls what changed there, then pushes what is owed; to a PSA, pushes what is owed; to Microsoft 365, delivers the agents' follow-ups owed to the mailbox. 409 while a run is running or for a disconnected integration.",
  })
  @OperationLimited('syncIntegration', { windowS: 60, max: 10 })
  syncIntegration(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.integrationSyncs.start(id);
  }

  @RequiresPermission('integrations:read')
  @Query(() => SyncRunList, { description: "An integration's sync runs, newest first.", complexity: listComplexity })
  integrationSyncRuns(
    @Arg('id', () => ID, { description: 'The integration (int_…).' }) id: string,
    @Arg('filter', () => SyncRunListInput, { nullable: true }) filter: SyncRunListInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.integrationSyncs.runs(id, filter);
  }

  @Extensions({ rest: false })
  @FieldResolver(() => [SyncFailure], {
    description: 'The objects the run could not carry over, oldest first (GraphQL only).',
    complexity: failuresComplexity,
  })
  failures(@Root() run: SyncRun, @Arg('limit', () => Int, { defaultValue: MAX_FAILURES_READ }) limit: number, @Ctx() ctx: RequestContext) {
    return ctx.services.integrationSyncs.failures(run, limit);
  }
}
