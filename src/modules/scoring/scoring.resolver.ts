import { Ctx, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';
import { AGGREGATE_COST } from '../../graphql/checks/cost-limit';
import { ScoringModelInfo } from './lead-model.entity';

@Resolver()
export class ScoringResolver {
  @RequiresPermission('leads:read')
  @Query(() => ScoringModelInfo, {
    description: "The lead-score model of the key's account and mode: version, training size, held-out AUC and calibration.",
    complexity: AGGREGATE_COST,
  })
  leadScoringModel(@Ctx() ctx: RequestContext) {
    return ctx.services.scoring.info();
  }
}
