import { MikroORM } from '@mikro-orm/postgresql';
import express, { Request, Response, Router } from 'express';
import type { ServiceFactory } from '../modules/module';
import { generateFromForm } from './key-actions';
import { keyForm, keyFormValues } from './key-views';
import { originOf } from './keys.router';
import { loadDemoData, onboardingState } from './onboarding';
import { sameOrigin } from './web-auth';
import type { Guards } from './web-guards';
import type { SignedIn } from './web-session.service';
import { WebSessionService } from './web-session.service';
import { WelcomePageState, welcomePage } from './welcome-page';

/** /welcome, the onboarding: a first test key (shown once with a curl line), demo data, the docs. */
export function createWelcomeRouter(deps: { orm: MikroORM; encryptionKey: Buffer; guards: Guards; servicesFor: ServiceFactory }): Router {
  const router = Router();
  const { orm, encryptionKey, guards } = deps;
  const forms = express.urlencoded({ extended: false, limit: '16kb' });

  const show = async (req: Request, res: Response, who: SignedIn, state: Omit<WelcomePageState, 'onboarding' | 'origin'> = {}, status = 200) => {
    const onboarding = await onboardingState(orm, who.account);
    res.status(status).send(welcomePage(who, { ...state, onboarding, origin: originOf(req) }));
  };

  router.get('/welcome', async (req, res) => {
    const who = await guards.withSession(req, res);
    if (!who) return;
    const created = await new WebSessionService(orm.em.fork()).takeNewKey(who.session, encryptionKey);
    const demoMessage = req.query.demo === 'loaded' ? { text: 'Demo data loaded.', refused: false } : undefined;
    await show(req, res, who, { created, demoMessage });
  });

  // Step 1 makes a secret test key whatever the form says: it is the page's one purpose.
  router.post('/welcome/key', sameOrigin, forms, async (req, res) => {
    const resend = (fresh: SignedIn, body: Record<string, string>) =>
      keyForm(fresh.session.csrfToken, 'test', keyFormValues(body), undefined, { action: '/welcome/key', heading: null, restrictable: false });
    const who = await guards.checkedPost(req, res, resend);
    if (!who || !guards.allowedRole(res, who, ['owner', 'admin'], 'Making an API key')) return;
    const body = { ...(req.body as Record<string, string>), type: 'test', kind: 'secret' };
    const error = await generateFromForm(orm.em.fork(), who, body, encryptionKey);
    if (!error) return void res.redirect(303, '/welcome');
    await show(req, res, who, { keyError: error, keyValues: keyFormValues(body) }, 400);
  });

  router.post('/welcome/demo-data', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, guards.resendButton('/welcome/demo-data', 'Load demo data'));
    if (!who || !guards.allowedRole(res, who, ['owner', 'admin', 'member'], 'Loading demo data')) return;
    const result = await loadDemoData(orm, deps.servicesFor, who.account);
    if (result.loaded) return void res.redirect(303, '/welcome?demo=loaded');
    const text = `Nothing was added: your test data already has ${result.leads.toLocaleString('en-US')} leads and ${result.deals.toLocaleString(
      'en-US',
    )} deals, and demo data is loaded only into an empty test mode, so it never mixes with (or doubles) what is there.`;
    await show(req, res, who, { demoMessage: { text, refused: true } }, 409);
  });
  return router;
}
