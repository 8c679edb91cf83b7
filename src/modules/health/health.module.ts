import { defineModule } from '../module';
import { HealthResolver } from './health.resolver';

export const healthModule = defineModule({
  name: 'health',
  resolvers: [HealthResolver],
  routes: [
    {
      method: 'GET',
      path: '/v1/health',
      summary: 'API status and version',
      operation: { type: 'query', field: 'health' },
      statusFrom: (data) => (data.status === 'ok' ? 200 : 503),
    },
  ],
});
