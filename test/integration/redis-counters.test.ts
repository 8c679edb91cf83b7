import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { consume, Counters, createRedis, peek, redisReady, refund } from '../../src/limits/counters';
import { testRedisUrl } from '../helpers/app';

const REDIS_URL = testRedisUrl();

/**
 * The counters' Redis client auto-pipelines: commands sent in one tick leave in one write. A count
 * is plain commands (INCRBY; PTTL for a window the limiter does not know yet; EXPIRE for a key
 * without one: PlainCommandsLimiter in src/limits/counters.ts).
 * The first test is what crashed instances while a count was the library's Lua command, defined on
 * the client when the first limiter was built: a count queued on a pipeline created before that
 * misaligned the pipeline's results and threw outside any promise (redis/ioredis#1931).
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
    // A window's first count gave its key the window's expiry.
    const ttl = await redis.ttl(`${counters.namespace}:requests:${key}`);
    expect(ttl).toBeGreaterThan(55);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await redis.get(marker)).toBe('stamp');
    // Let the pipeline's callbacks run out, then nothing was thrown outside a promise.
    await new Promise((resolve) => setImmediate(resolve));
    expect(uncaught).toEqual([]);
    await redis.del(marker);
  });

  it("gives a counter that lost its expiry one again, as the library's script does, and counts on", async () => {
    const namespace = `rc-${randomUUID()}`;
    const counters = new Counters(redis, namespace);
    const key = `acct_${randomUUID()}`;
    const stored = `${namespace}:requests:${key}`;
    // What a process stopped between a window's first INCRBY and its EXPIRE leaves: a count without an expiry.
    await redis.set(stored, 4);
    const counted = await consume(counters.limiter('requests', 60), key, 10);
    expect(counted).toMatchObject({ allowed: true, remaining: 5 });
    expect(counted.resetAt - Date.now() / 1000).toBeGreaterThan(55);
    expect(await redis.ttl(stored)).toBeGreaterThan(55);
    expect(await redis.get(stored)).toBe('5');
    // Past the limit is refused; a refund (a negative count through the same commands) gives it back.
    await consume(counters.limiter('requests', 60), key, 10, undefined, 5);
    expect((await consume(counters.limiter('requests', 60), key, 10)).allowed).toBe(false);
    expect(await redis.get(stored)).toBe('11');
    expect(await refund(counters.limiter('requests', 60), key, 10, 1)).toMatchObject({ remaining: 0 });
    expect(await redis.get(stored)).toBe('10');
    expect(await redis.ttl(stored)).toBeGreaterThan(55);
    await redis.del(stored);
  });

  it('sends INCRBY alone within a window it knows, and asks again for a key that started afresh', async () => {
    const namespace = `rc-${randomUUID()}`;
    const counters = new Counters(redis, namespace);
    const limiter = counters.limiter('requests', 60);
    const key = `acct_${randomUUID()}`;
    const stored = `${namespace}:requests:${key}`;
    // What reaches Redis for this key, in order, as its MONITOR shows it.
    const monitor = await redis.monitor();
    const sent: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[1] === stored) sent.push(args[0].toLowerCase());
    });
    const until = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (sent.length < count && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      expect(sent.length).toBeGreaterThanOrEqual(count);
    };
    try {
      const first = await consume(limiter, key, 10);
      await until(3);
      expect(sent).toEqual(['incrby', 'pttl', 'expire']);
      const second = await consume(limiter, key, 10);
      const third = await consume(limiter, key, 10);
      await until(5);
      expect(sent.slice(3)).toEqual(['incrby', 'incrby']);
      expect(third).toMatchObject({ allowed: true, remaining: 7, resetAt: first.resetAt });
      expect(second.resetAt).toBe(first.resetAt);
      // Deleted (an operator, or the window expired early on Redis' clock): the count starts again and gets its own expiry.
      await redis.del(stored);
      expect(await consume(limiter, key, 10)).toMatchObject({ allowed: true, remaining: 9 });
      await until(9);
      // MONITOR shows the commands in the order Redis ran them, the DEL among them.
      expect(sent.slice(5)).toEqual(['del', 'incrby', 'pttl', 'expire']);
      expect(await redis.ttl(stored)).toBeGreaterThan(55);
    } finally {
      monitor.disconnect();
      await redis.del(stored);
    }
  });
});
