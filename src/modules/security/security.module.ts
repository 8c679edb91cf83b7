import { defineModule } from '../module';
import { SecurityEvent } from './security-event.entity';
import { SecurityEventResolver } from './security-event.resolver';
import { SecurityEventService } from './security-event.service';
import { SecurityLogRetention } from './security-log-retention';
import type { AgeRetentionOptions } from '../../common/age-retention';

declare module '../module' {
  interface Services {
    securityEvents: SecurityEventService;
  }
}

/** The security log (issue 67): who signed in, and who changed members, keys, integrations and the plan. */
export const securityModule = defineModule({
  name: 'security',
  entities: [SecurityEvent],
  resolvers: [SecurityEventResolver],
  routes: [
    { method: 'GET', path: '/v1/security_events', summary: 'List the security log', operation: { type: 'query', field: 'securityEvents', query: 'filter' } },
  ],
  workers: {
    securityLogRetention: ({ orm, logger }, overrides?: Partial<AgeRetentionOptions>) =>
      new SecurityLogRetention({ orm, logger: logger.child({ component: 'security-log' }), ...overrides }),
  },
  services: { securityEvents: ({ em }) => new SecurityEventService(em) },
});
