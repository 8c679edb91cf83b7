import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares run in order as one express layer, with express 5's rules for each: `next()` runs
 * the next one, `next(error)` (or a rejected promise) skips the rest and goes to express' error
 * handling. Every request passes the app's and /v1's chains; as one layer each, express matches
 * and re-mounts the path once per chain instead of once per middleware.
 */
export function compose(...handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction): void => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        const result: unknown = handler(req, res, next);
        if (result instanceof Promise) result.then(undefined, (rejected: unknown) => done(rejected ?? new Error('Rejected promise')));
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
