import type { NextFunction, Request, Response } from 'express';
import { newId } from '../common/ids';

/** A client's own X-Request-Id is echoed when it is sane; otherwise we mint `req_…`. */
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  const id = given && SANE.test(given) ? given : newId('req');
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}
