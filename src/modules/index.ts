import { eventsModule } from '../events/events.module';
import { idempotencyModule } from '../idempotency/idempotency.module';
import { webModule } from '../web/web.module';
import { accountsModule } from './accounts/accounts.module';
import { agentsModule } from './agents/agents.module';
import { dealsModule } from './deals/deals.module';
import { healthModule } from './health/health.module';
import { integrationsModule } from './integrations/integrations.module';
import { leadsModule } from './leads/leads.module';
import type { ModuleDefinition } from './module';
import { proposalsModule } from './proposals/proposals.module';
import { registerModules } from './registry';
import { requestLogsModule } from './request-logs/request-logs.module';
import { scoringModule } from './scoring/scoring.module';
import { webhooksModule } from './webhooks/webhooks.module';

/**
 * Every module of the service: the one list a new feature folder is added to
 * (docs/ARCHITECTURE.md, "Adding a resource"). The order is the order of the REST route table.
 */
export const MODULES: readonly ModuleDefinition[] = [
  healthModule,
  leadsModule,
  dealsModule,
  proposalsModule,
  agentsModule,
  integrationsModule,
  webhooksModule,
  eventsModule,
  requestLogsModule,
  scoringModule,
  accountsModule,
  idempotencyModule,
  webModule,
];

registerModules(MODULES);
