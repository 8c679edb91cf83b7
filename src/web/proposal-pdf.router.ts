import { Router } from 'express';
import { ApiError } from '../common/api-error';
import { tenantFork } from '../db/tenant';
import { sendFile } from '../http/send-file';
import type { Authenticated } from '../modules/accounts/api-key.service';
import { signedIn } from './web-auth';
import { html } from './html';
import { sendErrorPage } from './web-errors';
import type { WebDependencies } from './web-dependencies';

/**
 * A proposal's PDF for the signed-in person (the Deal page's links): the browser has a session,
 * not a key, so GET /v1/proposals/{id}/pdf is out of its reach. The proposal is read through the
 * same tenant-scoped EntityManager and service the API uses, so another account's or mode's id is
 * the styled 404 page (never its PDF), and the bytes, stored rendering and ETag are the API's.
 * It counts against the web app's own allowance, like the workspace's /graphql requests.
 */
export function createProposalPdfRouter(deps: WebDependencies): Router {
  const router = Router();
  router.get('/proposals/:id/pdf', async (req, res) => {
    const who = await signedIn(deps.orm, req);
    if (!who) return void res.redirect(303, '/login');
    const auth: Authenticated = { account: who.account, key: null, livemode: who.session.livemode };
    const decision = await deps.quota.consume(auth);
    if (!decision.allowed) {
      res.set('Retry-After', String(decision.retryAfterS));
      return sendErrorPage(
        res,
        429,
        'Too many requests',
        `This account's web pages have made too many requests this minute. Wait ${decision.retryAfterS} s, then try again.`,
      );
    }
    const em = tenantFork(deps.orm.em, { accountId: who.account.id, livemode: who.session.livemode });
    try {
      sendFile(req, res, await deps.servicesFor(em).proposals.pdf(req.params.id));
    } catch (error) {
      if (!(error instanceof ApiError && error.errorCode === 'resource_missing')) throw error;
      // The same answer for an id of another account or mode as for one that never existed.
      sendErrorPage(
        res,
        404,
        'Proposal not found',
        `There is no proposal ${req.params.id} in this account's ${who.session.livemode ? 'live' : 'test'} data.`,
        html`<p><a href="/pipeline">Go to the pipeline board</a> to find the deal and its proposals.</p>`,
      );
    } finally {
      em.clear();
    }
  });
  return router;
}
