import { defineModule } from '../module';
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
  services: { requestLogs: ({ em }) => new RequestLogService(em) },
});
