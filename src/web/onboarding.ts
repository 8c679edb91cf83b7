import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ServiceFactory } from '../modules/module';
import { makeDemoData } from '../modules/demo/demo-data';
import { tenantFork } from '../db/tenant';
import { Account } from '../modules/accounts/account.entity';
import { ApiKey, KeyType } from '../modules/accounts/api-key.entity';
import { Deal } from '../modules/deals/deal.entity';
import { Lead } from '../modules/leads/lead.entity';

/** How many leads "Load demo data" makes (with deals for about 40 % of them): enough to fill the board, made in a few seconds. */
export const DEMO_LEADS = 60;

/**
 * Whether a sign-in should land on the welcome page: the account has made no key and holds no data
 * in either mode (a first sign-in; later ones land on the dashboard). Counted across modes, so
 * `filters: false` on purpose, with the account in every condition.
 */
export async function isNewAccount(em: EntityManager, account: Account): Promise<boolean> {
  const [keys, leads, deals] = await Promise.all([
    em.count(ApiKey, { account }),
    em.count(Lead, { account }, { filters: false }),
    em.count(Deal, { account }, { filters: false }),
  ]);
  return keys + leads + deals === 0;
}

/** Where the welcome page's steps stand, in test mode (where they happen). */
export interface OnboardingState {
  testKeys: ApiKey[];
  leads: number;
  deals: number;
  /** A test key has answered a request: the curl line (or any call) worked. */
  keyUsed: boolean;
}

export async function onboardingState(orm: MikroORM, account: Account): Promise<OnboardingState> {
  const testMode = () => tenantFork(orm.em, { accountId: account.id, livemode: false });
  const [testKeys, leads, deals] = await Promise.all([
    orm.em.fork().find(ApiKey, { account, type: KeyType.test, revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    testMode().count(Lead, {}),
    testMode().count(Deal, {}),
  ]);
  return { testKeys, leads, deals, keyUsed: testKeys.some((key) => key.lastUsedAt) };
}

export type DemoDataResult = { loaded: true; leads: number; deals: number } | { loaded: false; leads: number; deals: number };

/**
 * Fills the account's test mode with the seed's demo leads and deals, unless it already has some
 * (never doubled). One transaction under an advisory lock of the account's test mode: two presses at
 * once (two tabs, two instances) run one after the other, and the second finds the first's data.
 */
export async function loadDemoData(orm: MikroORM, servicesFor: ServiceFactory, account: Account): Promise<DemoDataResult> {
  return orm.em.fork().transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`demo-data:${account.id}:test`]);
    const scoped = tenantFork(tx, { accountId: account.id, livemode: false });
    const [leads, deals] = [await scoped.count(Lead, {}), await scoped.count(Deal, {})];
    if (leads + deals > 0) return { loaded: false, leads, deals };
    const made = await makeDemoData(tx, { account, livemode: false, leads: DEMO_LEADS, seed: Math.floor(Math.random() * 1_000_000) + 1, servicesFor });
    return { loaded: true, ...made };
  });
}
