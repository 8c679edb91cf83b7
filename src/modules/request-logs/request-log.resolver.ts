import { Arg, Ctx, Extensions, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { listComplexity } from '../../graphql/checks/cost-limit';
import type { RequestContext } from '../../graphql/context';
import { RequestLog } from './request-log.entity';
import { RequestLogListInput } from './request-log.inputs';
import { RequestLogList } from './request-log.types';

/**
 * The Developers page's request logs. No REST route: like Stripe's dashboard logs, they are for
 * people looking into their integration, not for scripts. `events:read`, because a request log is
 * the account's activity trail as events are (which key did what, when), and a key that may read
 * events may already see every change those requests made; a resource of its own would make every
 * existing restricted key unable to read it for no gain.
 */
@Resolver(() => RequestLog)
export class RequestLogResolver {
  @RequiresPermission('events:read')
  @Extensions({ rest: false })
  @Query(() => RequestLogList, {
    description: "The account's API requests of the last 7 days in the key's mode, newest first (requests with a key or the web app's session).",
    complexity: listComplexity,
  })
  requestLogs(@Arg('filter', () => RequestLogListInput, { nullable: true }) filter: RequestLogListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.requestLogs.list(filter);
  }
}
