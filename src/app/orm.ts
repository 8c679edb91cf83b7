import type { MikroORM, Options } from '@mikro-orm/postgresql';
import { AuthChangeSubscriber } from '../auth/key-cache';
import { initOrm, ormConfig, OrmOptions } from '../db/orm';
import { OutboxSubscriber } from '../events/outbox.subscriber';
import { ENTITIES } from './modules';

export type AppOrmOptions = Omit<OrmOptions, 'entities' | 'subscribers'>;

/**
 * The ORM of this service: every module's entities, and the subscribers that render event payloads
 * inside the flush that writes them (the transactional outbox) and renew the gate's key stamp once
 * a change of a key or an account has committed (src/auth/key-cache.ts).
 */
const withModules = (options: AppOrmOptions): OrmOptions => ({
  ...options,
  entities: ENTITIES,
  subscribers: [new OutboxSubscriber(), new AuthChangeSubscriber()],
});

/** Connects and brings the schema up to date (src/db/orm.ts, initOrm). */
export const initAppOrm = (options: AppOrmOptions): Promise<MikroORM> => initOrm(withModules(options));

/** The configuration alone, for tools that make their own ORM (scripts/create-migration.ts). */
export const appOrmConfig = (options: AppOrmOptions): Options => ormConfig(withModules(options));
