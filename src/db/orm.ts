import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, EntityClass, EventSubscriber, MikroORM, Options } from '@mikro-orm/postgresql';
import { AccountScopedEntity, TenantEntity } from './base.entity';
import { migrations } from './migrations';
import { contextsOnlyWhileRunning } from './async-context';
import { withoutPreparedStatements } from './lean';
import { accountFilter, tenantFilter } from './tenant';
import type { DatabaseTimeouts } from './database-timeouts';

export type { DatabaseTimeouts };

export interface OrmOptions {
  clientUrl: string;
  /** Every entity (src/app/modules.ts, ENTITIES); those that extend TenantEntity get the tenant filter. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- entity classes of any shape
  entities: ReadonlyArray<EntityClass<any>>;
  /** What listens to the unit of work (src/app/orm.ts: the outbox, the key cache's stamp). */
  subscribers?: readonly EventSubscriber[];
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

export function ormConfig(options: OrmOptions): Options {
  const log = (message: unknown) => options.log?.(String(message));
  return defineConfig({
    clientUrl: options.clientUrl,
    entities: [...options.entities],
    discovery: { requireEntitiesArray: true },
    metadataCache: { enabled: false },
    extensions: [Migrator],
    subscribers: [...(options.subscribers ?? [])],
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
      [tenantFilter.name]: {
        ...tenantFilter,
        entity: options.entities.filter((entity) => entity.prototype instanceof TenantEntity).map((entity) => entity.name),
      },
      [accountFilter.name]: {
        ...accountFilter,
        entity: options.entities.filter((entity) => entity.prototype instanceof AccountScopedEntity).map((entity) => entity.name),
      },
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
