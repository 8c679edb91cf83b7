import { Ctx, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';

@ObjectType({ simpleResolvers: true, description: 'API status and version (CONTRACT §13).' })
export class Health {
  @Field({ description: '"ok", or "degraded" when the database is unreachable.' })
  status!: 'ok' | 'degraded';

  @Field({ description: "The service's package version." })
  version!: string;

  @Field()
  apiVersion!: string;

  @Field({ description: '"ok" or "unavailable".' })
  database!: 'ok' | 'unavailable';

  @Field(() => Int, { description: 'Seconds since the service started.' })
  uptimeS!: number;
}

const STARTED_AT = Date.now();

export async function checkDatabase(ping: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  try {
    await ping();
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

@Resolver()
export class HealthResolver {
  @RequiresPermission('public')
  @Query(() => Health)
  async health(@Ctx() ctx: RequestContext): Promise<Health> {
    const database = await checkDatabase(() => ctx.em.getConnection().execute('select 1', [], 'all', ctx.em.getTransactionContext()));
    return {
      status: database === 'ok' ? 'ok' : 'degraded',
      version: ctx.config.version,
      apiVersion: 'v1',
      database,
      uptimeS: Math.floor((Date.now() - STARTED_AT) / 1000),
    };
  }
}
