import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { compose } from '../../src/http/compose';

/** Runs a composed chain on stand-in req/res and tells how it ended: done() or done(error). */
function run(chain: RequestHandler): Promise<{ error?: unknown; calls: string[] }> {
  const calls: string[] = [];
  const req = { calls } as unknown as Request;
  return new Promise((resolve) => {
    chain(req, {} as Response, ((error?: unknown) => resolve({ error, calls })) as NextFunction);
  });
}

const step =
  (name: string): RequestHandler =>
  (req, _res, next) => {
    (req as unknown as { calls: string[] }).calls.push(name);
    next();
  };

describe('compose', () => {
  it('runs the middlewares in order, then the outer next', async () => {
    expect(await run(compose(step('a'), step('b'), step('c')))).toEqual({ error: undefined, calls: ['a', 'b', 'c'] });
  });

  it('skips the rest on next(error), a throw or a rejected promise, as express does', async () => {
    const failure = new Error('no');
    const ways: RequestHandler[] = [
      (_req, _res, next) => next(failure),
      () => {
        throw failure;
      },
      async () => {
        await Promise.resolve();
        throw failure;
      },
    ];
    for (const way of ways) expect(await run(compose(step('a'), way, step('c')))).toEqual({ error: failure, calls: ['a'] });
  });

  it('continues after a middleware that calls next later (a body read)', async () => {
    const later: RequestHandler = (_req, _res, next) => void setImmediate(() => next());
    expect((await run(compose(step('a'), later, step('b')))).calls).toEqual(['a', 'b']);
  });

  it('stops where a middleware answers without calling next', async () => {
    const calls: string[] = [];
    const answered = new Promise<void>((resolve) => {
      const chain = compose(step('a'), () => resolve(), step('c'));
      chain({ calls } as unknown as Request, {} as Response, () => calls.push('done'));
    });
    await answered;
    expect(calls).toEqual(['a']);
  });
});
