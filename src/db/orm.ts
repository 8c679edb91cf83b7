import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, MikroORM, Options } from '@mikro-orm/postgresql';
import { AuthChangeSubscriber } from '../auth/key-cache';
import { OutboxSubscriber } from '../events/outbox.subscriber';
import { MODULES } from '../modules';
import { TenantEntity, TimestampedEntity } from './base.entity';
import { migrations } from './migrations';
import { contextsOnlyWhileRunning } from './async-context';
import { withoutPreparedStatements } from './lean';
import { tenantFilter } from './tenant';

/** Every entity: the base classes, then each module's. */
export const ENTITIES = [TimestampedEntity, TenantEntity, ...MODULES.flatMap((module) => module.entities ?? [])];

/** The entities the tenant filter scopes: every one that extends TenantEntity, known from the class itself. */
export const TENANT_ENTITIES = ENTITIES.filter((entity) => entity.prototype instanceof TenantEntity);

export interface OrmOptions {
  clientUrl: string;
  poolMax?: number;
  /**
   * Limits on every connection of the pool (PostgreSQL's statement_timeout and
   * idle_in_transaction_session_timeout): no request can hold a connection, or the locks of its
   * transaction, for longer. Migrations run on a connection without them.
   */
  timeouts?: DatabaseTimeouts;
  /** false: the hot reads run unnamed (src/db/lean.ts, selectRows); prepared once per connection by default. */
  preparedStatements?: boolean;
  debug?: boolean;
  /** Where MikroORM's own messages (migrations applied) go; silent when not given. */
  log?: (message: string) => void;
  /** Told how many migrations are about to run, when there are any (a first start applies them all). */
  progress?: (message: string) => void;
}

/**
 * In milliseconds; 0 sets none (pg sends no startup parameter for 0), so PostgreSQL's own setting
 * applies: off, unless the database or role sets one.
 */
export interface DatabaseTimeouts {
  statementMs: number;
  idleInTransactionMs: number;
}

export function ormConfig(options: OrmOptions): Options {
  const log = (message: unknown) => options.log?.(String(message));
  return defineConfig({
    clientUrl: options.clientUrl,
    entities: ENTITIES,
    discovery: { requireEntitiesArray: true },
    metadataCache: { enabled: false },
    extensions: [Migrator],
    // Renders event payloads inside the flush that writes them (the transactional outbox); renews
    // the gate's key stamp once a change of a key or an account has committed (src/auth/key-cache.ts).
    subscribers: [new OutboxSubscriber(), new AuthChangeSubscriber()],
    migrations: {
      migrationsList: migrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      path: 'src/db/migrations',
      emit: 'ts',
    },
    filters: {
      [tenantFilter.name]: { ...tenantFilter, entity: TENANT_ENTITIES.map((entity) => entity.name) },
    },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    driverOptions: {
      connection: {
        connectionTimeoutMillis: 5_000,
        ...(options.timeouts
          ? { statement_timeout: options.timeouts.statementMs, idle_in_transaction_session_timeout: options.timeouts.idleInTransactionMs }
          : {}),
      },
      // knex would print pool and connection warnings with console.log; they join our logs instead.
      log: { warn: log, error: log, deprecate: log, debug: () => undefined },
    },
    forceUtcTimezone: true,
    // Requests use forks; touching the global EntityManager is a bug and should fail loudly.
    allowGlobalContext: false,
    debug: options.debug ?? false,
    colors: false,
    logger: options.log ?? (() => undefined),
  });
}

/**
 * Connects and brings the schema up to date with the committed migrations (never schema sync).
 * With timeouts, the migrations run first on a pool of their own without them: building an index
 * over a million rows is not a request.
 */
export async function initOrm(options: OrmOptions): Promise<MikroORM> {
  const { timeouts, ...untimed } = options;
  const migrator = await MikroORM.init(ormConfig(timeouts ? { ...untimed, poolMax: 1 } : options));
  try {
    const pending = options.progress ? await migrator.getMigrator().getPendingMigrations() : [];
    if (pending.length > 0) options.progress?.(`applying ${pending.length} database migration${pending.length === 1 ? '' : 's'}`);
    await migrator.getMigrator().up();
  } catch (error) {
    await migrator.close();
    throw error;
  }
  let orm = migrator;
  if (timeouts) {
    await migrator.close();
    orm = await MikroORM.init(ormConfig(options));
  }
  if (options.preparedStatements === false) withoutPreparedStatements(orm);
  await contextsOnlyWhileRunning(orm);
  return orm;
}
