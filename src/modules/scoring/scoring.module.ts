import { defineModule } from '../module';
import { ModelTrainer, ModelTrainerOptions } from './model-trainer';
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
  workers: {
    trainer: ({ orm, logger, servicesFor }, overrides?: Partial<ModelTrainerOptions>) =>
      new ModelTrainer({ orm, logger: logger.child({ component: 'scoring' }), servicesFor, ...overrides }),
  },
  services: { scoring: ({ em, settings }) => new ScoringService(em, settings.scorer) },
});
