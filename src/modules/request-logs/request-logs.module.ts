import { defineModule } from '../module';
import { RequestLogRetention, RequestLogRetentionOptions } from './request-log-retention';
import { RequestLog } from './request-log.entity';
import { RequestLogResolver } from './request-log.resolver';
import { RequestLogService } from './request-log.service';

declare module '../module' {
  interface Services {
    requestLogs: RequestLogService;
  }
}

/** The accounts' request logs: written by RequestLogWriter (src/app.ts), read here, removed by RequestLogRetention. */
export const requestLogsModule = defineModule({
  name: 'request-logs',
  entities: [RequestLog],
  resolvers: [RequestLogResolver],
  workers: {
    requestLogRetention: ({ orm, logger }, overrides?: Partial<RequestLogRetentionOptions>) =>
      new RequestLogRetention({ orm, logger: logger.child({ component: 'request-logs' }), ...overrides }),
  },
  services: { requestLogs: ({ em }) => new RequestLogService(em) },
});
