import { randomUUID } from 'node:crypto';
import type { GraphQLResolveInfo } from 'graphql';
import { getGraphQLRateLimiter, Identity, Store } from 'graphql-rate-limit';
import { Redis } from 'ioredis';
import { createMethodMiddlewareDecorator } from 'type-graphql';
import { ApiError } from '../common/api-error';
import { requestError } from '../graphql/request-error';
import { Counters } from './counters';

export interface OperationLimit {
  windowS: number;
  max: number;
}

/** Limits by operation name (the GraphQL field). */
export type OperationLimits = Record<string, OperationLimit>;

/**
 * The expensive operations and their limits per account and mode, on top of the plan quota: filled
 * by @OperationLimited where each resolver declares its own, so no list is kept by hand.
 */
export const OPERATION_LIMITS: OperationLimits = {};

/** How long a lock may be held before it is given up (a call that died between read and write). */
const LOCK_MS = 2_000;
const RELEASE_IF_OURS = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * graphql-rate-limit's Store, made exact under concurrency. The limiter reads an identity's call
 * timestamps and then writes them back; calls that ran at once (aliases of one operation, parallel
 * requests, other instances) would overwrite each other. Here each read takes a lock on the
 * identity (in this process, and in Redis when counts are shared) that the following write
 * releases, so every call counts. Timestamps live in Redis when configured, else in memory.
 */
class ExactStore implements Store {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly held = new Map<string, () => Promise<void>>();
  private readonly memory = new Map<string, { timestamps: readonly number[]; expiresAt: number }>();

  constructor(
    private readonly redis: Redis | undefined,
    private readonly namespace: string,
  ) {}

  private key(identity: Identity): string {
    return `${this.namespace}:op:${identity.contextIdentity}:${identity.fieldIdentity}`;
  }

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const key = this.key(identity);
    this.held.set(key, await this.lock(key));
    if (this.redis) {
      const stored = await this.redis.get(key);
      return stored ? (JSON.parse(stored) as number[]) : [];
    }
    const entry = this.memory.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.timestamps : [];
  }

  async setForIdentity(identity: Identity, timestamps: readonly number[], windowMs = 60_000): Promise<void> {
    const key = this.key(identity);
    try {
      if (this.redis) await this.redis.set(key, JSON.stringify(timestamps), 'PX', windowMs);
      else this.memory.set(key, { timestamps, expiresAt: Date.now() + windowMs });
    } finally {
      const release = this.held.get(key);
      this.held.delete(key);
      await release?.();
    }
  }

  /** Waits for the identity's lock; resolves with its release. */
  private async lock(key: string): Promise<() => Promise<void>> {
    let releaseLocal!: () => void;
    const mine = new Promise<void>((resolve) => (releaseLocal = resolve));
    const before = this.queues.get(key) ?? Promise.resolve();
    const queue = before.then(() => mine);
    this.queues.set(key, queue);
    await before;
    const timer = setTimeout(releaseLocal, LOCK_MS);
    timer.unref();

    let releaseShared = async () => undefined as unknown;
    if (this.redis) {
      const redis = this.redis;
      const lockKey = `${key}:lock`;
      const token = randomUUID();
      const deadline = Date.now() + LOCK_MS;
      while (!(await redis.set(lockKey, token, 'PX', LOCK_MS, 'NX')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      releaseShared = () => redis.eval(RELEASE_IF_OURS, 1, lockKey, token);
    }
    return async () => {
      clearTimeout(timer);
      try {
        await releaseShared();
      } finally {
        releaseLocal();
        if (this.queues.get(key) === queue) this.queues.delete(key);
      }
    };
  }
}

type Check = ReturnType<typeof getGraphQLRateLimiter>;

/** What the limiter needs of a request's context: whose count it is, and the limiter itself. */
interface LimitedContext {
  auth: { account: { id: string }; livemode: boolean };
  operationLimiter: OperationLimiter;
}

export class OperationLimiter {
  private readonly check: Check;

  constructor(
    counters: Counters,
    /** Limits that replace the operations' own (tests raise or lower them). */
    private readonly overrides: Partial<OperationLimits> = {},
    /** Told of each call refused (for the rate-limit metrics). */
    private readonly onRejected?: () => void,
    /** false with RATE_LIMITS=off: nothing is counted or refused. */
    private readonly enabled = true,
  ) {
    this.check = getGraphQLRateLimiter({
      identifyContext: (context: LimitedContext) => `${context.auth.account.id}:${context.auth.livemode ? 'live' : 'test'}`,
      store: new ExactStore(counters.redis, counters.namespace),
      formatError: ({ fieldName, max, window }) => `Too many ${fieldName} calls: at most ${max} per ${Math.round(window / 1000)} s for this account and mode`,
    });
  }

  limitOf(operation: string): OperationLimit {
    const limit = this.overrides[operation] ?? OPERATION_LIMITS[operation];
    if (!limit) throw new Error(`no limit is declared for the operation ${operation}`);
    return limit;
  }

  /** Counts one call; resolves to an error message when the operation is over its limit. */
  async exceeded(operation: string, call: { args: Record<string, unknown>; context: LimitedContext; info: GraphQLResolveInfo }) {
    if (!this.enabled) return undefined;
    const { windowS, max } = this.limitOf(operation);
    const message = await this.check({ parent: undefined, ...call }, { window: `${windowS}s`, max, uncountRejected: true });
    if (message) this.onRejected?.();
    return message ?? undefined;
  }
}

/**
 * Marks a resolver as an expensive operation with its limit per account and mode (graphql-rate-limit
 * through a type-graphql middleware). Each call counts, whether it comes from REST or GraphQL and
 * however many aliases an operation uses; over the limit is 429 rate_limit_exceeded.
 */
export function OperationLimited(operation: string, limit: OperationLimit): MethodDecorator {
  OPERATION_LIMITS[operation] = limit;
  return createMethodMiddlewareDecorator<LimitedContext>(async ({ args, context, info }, next) => {
    const message = await context.operationLimiter.exceeded(operation, { args, context, info });
    if (message) {
      throw requestError(new ApiError('rate_limit_exceeded', message, { retryAfterS: context.operationLimiter.limitOf(operation).windowS }));
    }
    return next();
  });
}
