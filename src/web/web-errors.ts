import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';
import { html, page, PageOptions, SafeHtml } from './html';

/** Paths the web router answers: a request for one of them always gets an HTML page, errors included. */
const WEB_PATHS = /^\/(signup|login|logout|dashboard|welcome|settings|assets|sso)(\/|$)/;
/** The API's paths keep the API's JSON answers (404 in the error shape), whatever the client accepts. */
const API_PATHS = /^\/(v1|graphql|healthz|readyz|metrics|docs)(\/|$)/;

/** Pages load only our own scripts and styles; nothing inline, no frames; never cached (they show account data). */
export function webHeaders(res: Response): void {
  res.set('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'");
  res.set('Cache-Control', 'no-store');
}

/** A page of the app with this status, with the app's headers (the API's policy would block its stylesheet). */
export function sendPage(res: Response, status: number, options: PageOptions): void {
  webHeaders(res);
  res.status(status).type('html').send(page(options));
}

const home = html`<p><a href="/">Go to the start page</a> (your dashboard when you are signed in, otherwise the login page).</p>`;

/** The styled answer of an error: what happened in words, and a way on. */
export function sendErrorPage(res: Response, status: number, title: string, explanation: SafeHtml | string, more: SafeHtml | string = home): void {
  sendPage(res, status, { title, body: html`<section class="card"><p>${explanation}</p>${more}</section>` });
}

/**
 * Whether a request that found no route is a browser asking for a page of the app: a path the web
 * router owns, or a GET that is not an API path and prefers HTML to JSON (what browsers send).
 */
export function isAppPage(req: Request): boolean {
  if (WEB_PATHS.test(req.path)) return true;
  if (API_PATHS.test(req.path)) return false;
  return (req.method === 'GET' || req.method === 'HEAD') && req.accepts(['application/json', 'text/html']) === 'text/html';
}

/** Mounted before the API's not-found handler: app pages get a styled 404, everything else goes on to the JSON one. */
export function webNotFound(req: Request, res: Response, next: NextFunction): void {
  if (!isAppPage(req)) return next();
  sendErrorPage(res, 404, 'Page not found', `There is no page at ${req.path}. The address may be mistyped, or the page may have moved.`);
}

/**
 * The web router's last handler: an error in a page is answered with a page, not the API's JSON.
 * Client errors raised by the body parser (a form too large, bad encoding) keep their status.
 */
export function webErrorHandler(logger: Logger) {
  return (error: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    const status = (error as { status?: unknown })?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendErrorPage(
        res,
        status,
        'The form could not be read',
        'What was sent could not be read as a form (it may be too large). Go back and try again.',
      );
    }
    if (error instanceof URIError) return sendErrorPage(res, 404, 'Page not found', 'That address is not a valid address of this site.');
    logger.error({ err: error, requestId: res.locals.requestId }, 'unhandled error in a web page');
    const reference = res.locals.requestId ? html` If it keeps happening, tell us this reference: <code>${String(res.locals.requestId)}</code>.` : '';
    sendErrorPage(
      res,
      500,
      'Something went wrong',
      html`We could not show this page because of an error on our side; nothing you did caused it. Try again in a moment.${reference}`,
    );
  };
}
