import type { GraphQLResolveInfo } from 'graphql';
import { getGraphQLRateLimiter, Identity, InMemoryStore, Store } from 'graphql-rate-limit';
import { Redis } from 'ioredis';
import { createMethodMiddlewareDecorator } from 'type-graphql';
import { ApiError } from '../common/errors';
import type { RequestContext } from '../graphql/context';
import { Counters } from './counters';

/** The expensive operations, each limited per account and mode on top of the plan quota. */
export type LimitedOperation = 'leadScore' | 'generateProposal' | 'registerDeal' | 'deployAgent' | 'connectIntegration';

export interface OperationLimit {
  windowS: number;
  max: number;
}

export type OperationLimits = Record<LimitedOperation, OperationLimit>;

export const OPERATION_LIMITS: OperationLimits = {
  leadScore: { windowS: 60, max: 60 },
  generateProposal: { windowS: 60, max: 20 },
  registerDeal: { windowS: 60, max: 10 },
  deployAgent: { windowS: 60, max: 10 },
  connectIntegration: { windowS: 60, max: 10 },
};

/** graphql-rate-limit's store on our Redis client (its own RedisStore expects the old callback API). */
class IoRedisStore implements Store {
  constructor(
    private readonly redis: Redis,
    private readonly namespace: string,
  ) {}

  private key(identity: Identity): string {
    return `${this.namespace}:op:${identity.contextIdentity}:${identity.fieldIdentity}`;
  }

  async setForIdentity(identity: Identity, timestamps: readonly number[], windowMs?: number): Promise<void> {
    const ttl = windowMs ? Math.max(1, Math.ceil(windowMs / 1000)) : 3600;
    await this.redis.set(this.key(identity), JSON.stringify(timestamps), 'EX', ttl);
  }

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const stored = await this.redis.get(this.key(identity));
    return stored ? (JSON.parse(stored) as number[]) : [];
  }
}

type Check = ReturnType<typeof getGraphQLRateLimiter>;

export class OperationLimiter {
  private readonly check: Check;

  constructor(
    counters: Counters,
    readonly limits: OperationLimits = OPERATION_LIMITS,
  ) {
    this.check = getGraphQLRateLimiter({
      identifyContext: (context: RequestContext) => `${context.auth.account.id}:${context.auth.livemode ? 'live' : 'test'}`,
      store: counters.redis ? new IoRedisStore(counters.redis, counters.namespace) : new InMemoryStore(),
      formatError: ({ fieldName, max, window }) =>
        `Too many ${fieldName} calls: at most ${max} per ${Math.round(window / 1000)} s for this account and mode`,
    });
  }

  windowSeconds(operation: LimitedOperation): number {
    return this.limits[operation].windowS;
  }

  /** Resolves to an error message when the operation is over its limit. */
  async exceeded(operation: LimitedOperation, call: { args: Record<string, unknown>; context: RequestContext; info: GraphQLResolveInfo }) {
    const limit = this.limits[operation];
    const message = await this.check({ parent: undefined, ...call }, { window: `${limit.windowS}s`, max: limit.max, uncountRejected: true });
    return message ?? undefined;
  }
}

/**
 * Marks a resolver as an expensive operation. Each call counts, whether it comes from REST or
 * GraphQL and however many aliases an operation uses; over the limit is 429 rate_limit_exceeded.
 */
export function OperationLimited(operation: LimitedOperation): MethodDecorator {
  return createMethodMiddlewareDecorator<RequestContext>(async ({ args, context, info }, next) => {
    const message = await context.operationLimiter.exceeded(operation, { args, context, info });
    if (message) {
      throw new ApiError('rate_limit_exceeded', message, { retryAfterS: context.operationLimiter.windowSeconds(operation) });
    }
    return next();
  });
}
