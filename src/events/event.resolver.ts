import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../auth/permission';
import type { RequestContext } from '../graphql/context';
import { listComplexity } from '../graphql/checks/cost-limit';
import { Event } from './event.entity';
import { EventListInput } from './event.inputs';
import { EventList } from './event.types';

/** Events are read through GraphQL (dashboards); webhooks push them to subscribers. */
@Resolver(() => Event)
export class EventResolver {
  @RequiresPermission('events:read')
  @Query(() => EventList, { description: "Events of the key's account and mode, newest first.", complexity: listComplexity })
  events(@Arg('filter', () => EventListInput, { nullable: true }) filter: EventListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.events.list(filter);
  }

  @RequiresPermission('events:read')
  @Query(() => Event)
  event(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.events.get(id);
  }
}
