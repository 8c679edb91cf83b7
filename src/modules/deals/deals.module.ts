import { defineModule } from '../module';
import { CoSellWorker, CoSellWorkerOptions } from './co-sell-worker';
import { CoSellSync } from './co-sell-sync.entity';
import { CoSellRegistration, Deal, DealStageChange } from './deal.entity';
import { DealResolver } from './deal.resolver';
import { DealService } from './deal.service';

const DEAL_EVENTS = [
  'deal.created',
  'deal.updated',
  'deal.deleted',
  'deal.stage_changed',
  'deal.won',
  'deal.lost',
  'deal.registered',
  // A live registration's co_sell changed after registering (its Partner Center referral was created, or moved), with deal.updated.
  'deal.co_sell_updated',
] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof DEAL_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    deals: DealService;
  }
}

export const dealsModule = defineModule({
  name: 'deals',
  entities: [Deal, CoSellRegistration, DealStageChange, CoSellSync],
  events: DEAL_EVENTS,
  resolvers: [DealResolver],
  routes: [
    { method: 'GET', path: '/v1/deals', summary: 'List deals', operation: { type: 'query', field: 'deals', query: 'filter' } },
    { method: 'GET', path: '/v1/deals/:id', summary: 'Retrieve a deal', operation: { type: 'query', field: 'deal' } },
    {
      method: 'POST',
      path: '/v1/deals',
      summary: 'Create a deal',
      operation: { type: 'mutation', field: 'createDeal', body: 'input' },
      errors: ['resource_missing'],
      status: 201,
    },
    {
      method: 'PUT',
      path: '/v1/deals/:id',
      summary: 'Update deal stage, value or metadata',
      operation: { type: 'mutation', field: 'updateDeal', body: 'input' },
      errors: ['invalid_stage_transition'],
    },
    {
      method: 'DELETE',
      path: '/v1/deals/:id',
      summary: 'Delete a deal that has no proposal',
      operation: { type: 'mutation', field: 'deleteDeal' },
      errors: ['resource_conflict'],
    },
    {
      method: 'POST',
      path: '/v1/deals/:id/register',
      summary: 'Register a deal for co-sell',
      operation: { type: 'mutation', field: 'registerDeal' },
      errors: ['already_registered', 'deal_not_eligible'],
    },
    {
      method: 'GET',
      path: '/v1/deals/:id/co_sell_eligibility',
      summary: 'Check co-sell eligibility without registering',
      operation: { type: 'query', field: 'dealCoSellEligibility' },
    },
  ],
  workers: {
    coSell: ({ orm, logger, servicesFor, providers, config }, overrides?: Partial<CoSellWorkerOptions>) =>
      new CoSellWorker({
        orm,
        logger: logger.child({ component: 'co-sell' }),
        servicesFor,
        providers,
        referralPollIntervalMs: config.coSell.pollIntervalMs,
        ...overrides,
      }),
  },
  services: { deals: ({ em, services, events }) => new DealService(em, services.integrations, events) },
});
