import { Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../graphql/context';
import { ScoringModelInfo } from './lead-model.entity';

@Resolver()
export class ScoringResolver {
  @Query(() => ScoringModelInfo, { description: 'The lead-score model of the key\'s account and mode: version, training size, held-out AUC and calibration.', complexity: 20 })
  leadScoringModel(@Ctx() ctx: RequestContext) {
    return ctx.services.scoring.info();
  }
}
