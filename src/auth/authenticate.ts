import { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/errors';
import { mapDatabaseError } from '../db/database-errors';
import { ApiKeyService } from '../modules/accounts/api-key.service';

/**
 * Resolves `Authorization: Bearer sk_…` to `res.locals.auth` (account, key, mode) or answers 401.
 * `onError` writes the failure in the shape of the surface (REST body or GraphQL errors).
 */
export function authenticate(orm: MikroORM, onError: (res: Response, error: ApiError) => void) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const keys = new ApiKeyService(orm.em.fork());
      res.locals.auth = await keys.authenticate(req.get('authorization'));
      next();
    } catch (error) {
      const known = mapDatabaseError(error);
      if (!known) return next(error);
      onError(res, known);
    }
  };
}
