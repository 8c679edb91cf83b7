import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';
import { listComplexity } from '../../graphql/checks/cost-limit';
import { SecurityEvent } from './security-event.entity';
import { SecurityEventList, SecurityEventListInput } from './security-event.types';

@Resolver(() => SecurityEvent)
export class SecurityEventResolver {
  @RequiresPermission('security_events:read')
  @Query(() => SecurityEventList, {
    description: "The account's security log (kept 400 days; both modes share it), newest first. Read-only: nothing in it can be changed or deleted.",
    complexity: listComplexity,
  })
  securityEvents(@Arg('filter', () => SecurityEventListInput, { nullable: true }) filter: SecurityEventListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.securityEvents.list(filter);
  }
}
