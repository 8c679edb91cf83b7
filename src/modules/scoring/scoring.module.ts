import { defineModule } from '../module';
import { LeadModel } from './lead-model.entity';
import { ScoringResolver } from './scoring.resolver';
import { ScoringService } from './scoring.service';

declare module '../module' {
  interface Services {
    scoring: ScoringService;
  }
}

export const scoringModule = defineModule({
  name: 'scoring',
  entities: [LeadModel],
  resolvers: [ScoringResolver],
  services: { scoring: ({ em, settings }) => new ScoringService(em, settings.scorer) },
});
