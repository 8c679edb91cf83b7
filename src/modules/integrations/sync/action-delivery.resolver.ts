import { Ctx, Extensions, FieldResolver, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../../auth/permission';
import type { RequestContext } from '../../../graphql/context';
import { AgentRun } from '../../agents/agent.entity';
import { ActionDelivery } from './action-delivery';

/** An agent run's follow-ups in Microsoft 365 (logic in ActionDeliveryService). */
@Resolver(() => AgentRun)
export class ActionDeliveryResolver {
  @RequiresPermission('integrations:read')
  @Extensions({ rest: false })
  @FieldResolver(() => [ActionDelivery], {
    description:
      "Where the run's follow-ups went in Microsoft 365 (deal_follow_up with deliver_to outlook_draft or todo_task): one per deal_idle action and Microsoft 365 integration, by action_index (GraphQL only).",
    // Three index reads per run (links, owed rows, failures), whatever the number of actions.
    complexity: ({ childComplexity }) => 3 + childComplexity,
  })
  deliveries(@Root() run: AgentRun, @Ctx() ctx: RequestContext): Promise<ActionDelivery[]> {
    return ctx.services.actionDeliveries.of(run);
  }
}
