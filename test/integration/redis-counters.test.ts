import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { consume, Counters, createRedis, peek, redisReady } from '../../src/limits/counters';
import { testRedisUrl } from '../helpers/app';

const REDIS_URL = testRedisUrl();

/**
 * The counters' Redis client auto-pipelines: commands sent in one tick leave in one write. A
 * limiter's count is a Lua command that rate-limiter-flexible defines on the client, and ioredis
 * copies a client's commands into a pipeline when the pipeline is created (redis/ioredis#1931).
 * A count queued on a pipeline created before the command existed misaligned that pipeline's
 * results and threw outside any promise, which ended the process: the first burst after an
 * instance started, where another command (the key stamp's) opened the tick's pipeline.
 */
(REDIS_URL ? describe : describe.skip)('the counters on Redis, first commands of a fresh client', () => {
  let redis: Redis;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  beforeEach(async () => {
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
    redis = createRedis(REDIS_URL!);
    expect(await redisReady(redis, 10_000)).toBe(true);
  });
  afterEach(() => {
    process.off('uncaughtException', onUncaught);
    redis.disconnect();
  });

  it('counts in Redis a request counted in the same tick as another command, before any limiter existed', async () => {
    const counters = new Counters(redis, `rc-${randomUUID()}`);
    const key = `acct_${randomUUID()}`;
    const marker = `rc-${randomUUID()}`;
    // Another command first: it opens the tick's pipeline before the first limiter is built.
    const [stamp, counted] = await Promise.all([redis.set(marker, 'stamp', 'EX', 60, 'NX', 'GET'), consume(counters.limiter('requests', 60), key, 10)]);
    expect(stamp).toBeNull();
    expect(counted).toMatchObject({ allowed: true, limit: 10, remaining: 9 });
    // The count reached Redis (not the per-instance insurance counter), and each command got its own answer.
    expect(await peek(counters.limiter('requests', 60), key, 10)).toMatchObject({ remaining: 9 });
    expect(await redis.get(marker)).toBe('stamp');
    // Let the pipeline's callbacks run out, then nothing was thrown outside a promise.
    await new Promise((resolve) => setImmediate(resolve));
    expect(uncaught).toEqual([]);
    await redis.del(marker);
  });
});
