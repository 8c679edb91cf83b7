import { clientAddress } from '../http/client-address';
import { logFromSession } from './web-session.service';
import { MikroORM } from '@mikro-orm/postgresql';
import express, { Request, Response, Router } from 'express';
import type { Config } from '../config';
import { consume, Counters, peek } from '../limits/counters';
import { Account } from '../modules/accounts/account.entity';
import { TwoFactorService } from '../modules/two-factor/two-factor.service';
import { CHALLENGE_ATTEMPTS, clearChallengeCookie, SignInChallenges, startSession } from './sign-in';
import { twoFactorSettingsPage, TwoFactorSettingsState, twoFactorStepOverPage, twoFactorStepPage } from './two-factor-pages';
import { sameOrigin } from './web-auth';
import { waitWords } from './web-forms';
import type { Guards } from './web-guards';
import type { SignedIn } from './web-session.service';

/**
 * Wrong codes per person in 15 minutes, wherever they are typed (the sign-in's step, the settings'
 * forms): each pending sign-in takes a few, but a person whose password is known could start many.
 */
const CODE_LIMITS = { perUser: 10, windowS: 900 };

export interface TwoFactorRouterDependencies {
  orm: MikroORM;
  config: Config;
  counters: Counters;
  encryptionKey: Buffer;
  guards: Guards;
}

/** Two-step sign-in: the code step of a sign-in (/login/two-factor) and the person's settings (/settings/two-factor). */
export function createTwoFactorRouter(deps: TwoFactorRouterDependencies): Router {
  const router = Router();
  const { orm, config, guards } = deps;
  const forms = express.urlencoded({ extended: false, limit: '16kb' });
  const service = (em = orm.em.fork()) => new TwoFactorService(em, deps.encryptionKey);
  const codes = () => deps.counters.limiter('two-factor-user', CODE_LIMITS.windowS);

  /** Seconds until the person may try codes again, or 0. */
  const lockedFor = async (userId: string): Promise<number> => {
    const window = await peek(codes(), userId, CODE_LIMITS.perUser);
    return window && window.remaining === 0 ? Math.max(1, window.resetAt - Math.ceil(Date.now() / 1000)) : 0;
  };
  const countWrong = (userId: string) => consume(codes(), userId, CODE_LIMITS.perUser);
  const tooMany = (seconds: number) => ({ message: `Too many wrong codes. Wait about ${waitWords(seconds)}, then try again.`, fields: [] });

  router.get('/login/two-factor', async (req, res) => {
    const challenge = await new SignInChallenges(orm.em.fork()).of(req);
    if (!challenge) return void res.redirect(303, '/login');
    res.send(twoFactorStepPage());
  });

  router.post('/login/two-factor', sameOrigin, forms, async (req, res) => {
    const { code = '' } = req.body as Record<string, string>;
    const em = orm.em.fork();
    const challenges = new SignInChallenges(em);
    const challenge = await challenges.of(req);
    const over = (reason: string) => {
      clearChallengeCookie(req, res, config);
      res.status(400).send(twoFactorStepOverPage(reason));
    };
    if (!challenge) return over('This sign-in expired (it waits 5 minutes for the code) or was already finished. Sign in again.');
    const userId = challenge.user.id;
    const locked = await lockedFor(userId);
    if (locked) {
      res.set('Retry-After', String(locked));
      return void res.status(429).send(twoFactorStepPage(tooMany(locked)));
    }
    const attempts = await challenges.countAttempt(challenge);
    if (attempts === null) return over('Too many wrong codes for this sign-in. Sign in again.');
    const passed = await service(em).verify(userId, code);
    if (!passed) {
      await countWrong(userId);
      if (attempts >= CHALLENGE_ATTEMPTS) {
        await challenges.end(challenge);
        return over('Too many wrong codes for this sign-in. Sign in again.');
      }
      return void res
        .status(401)
        .send(twoFactorStepPage({ message: 'That code is not right, or was already used. Try the code your app shows now.', fields: ['code'] }));
    }
    // One session per pending sign-in, even if the right code arrives twice at once.
    if (!(await challenges.end(challenge))) return over('This sign-in was already finished. Sign in again.');
    clearChallengeCookie(req, res, config);
    await startSession(req, res, em, config, {
      user: challenge.user.getEntity(),
      account: challenge.account.getEntity(),
      // A recovery code used: the settings say how many are left, and where to make new ones.
      landing: passed === 'recovery_code' ? '/settings/two-factor?recovery=used' : undefined,
    });
  });

  const show = async (res: Response, who: SignedIn, state: Partial<TwoFactorSettingsState> = {}, status = 200) => {
    const twoFactor = service();
    const [setup, remaining, requiredBy] = await Promise.all([
      twoFactor.pending(who.user.id),
      twoFactor.remainingRecoveryCodes(who.user.id),
      twoFactor.requiredBy(who.user.id),
    ]);
    res.status(status).send(twoFactorSettingsPage(who, { setup, remaining, requiredBy: requiredBy.map((account) => account.name), ...state }));
  };
  const allowSetup = { twoFactorSetup: true };
  // The forms here have one visible field, a code that is stale anyway by the time the form is sent again.
  const resendPage = (action: string, label: string) => guards.resendButton(action, label);

  router.get('/settings/two-factor', async (req, res) => {
    const who = await guards.withSession(req, res, allowSetup);
    if (!who) return;
    const { recovery, off, required } = req.query;
    const notice =
      recovery === 'used'
        ? `You signed in with a recovery code; it no longer works. ${await service().remainingRecoveryCodes(who.user.id)} left.`
        : off === '1'
          ? 'Two-step sign-in is off.'
          : required === 'on'
            ? `Two-step sign-in is now required of everyone in ${who.account.name}.`
            : required === 'off'
              ? `Two-step sign-in is no longer required in ${who.account.name}.`
              : undefined;
    await show(res, who, { notice });
  });

  router.post('/settings/two-factor/setup', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, resendPage('/settings/two-factor/setup', 'Set up two-step sign-in'), allowSetup);
    if (!who) return;
    await service().begin(who.user.id);
    res.redirect(303, '/settings/two-factor');
  });

  /** Runs a form whose code must pass first; answers the page with the form's error otherwise. */
  const withCode = async (
    req: Request,
    res: Response,
    who: SignedIn,
    form: 'confirm' | 'regenerate' | 'disable',
    action: (code: string) => Promise<boolean>,
  ): Promise<void> => {
    const { code = '' } = req.body as Record<string, string>;
    const field = `${form}-code`;
    const locked = await lockedFor(who.user.id);
    if (locked) {
      res.set('Retry-After', String(locked));
      return show(res, who, { error: { ...tooMany(locked), fields: [field] }, errorIn: form }, 429);
    }
    if (await action(code)) return;
    await countWrong(who.user.id);
    await show(
      res,
      who,
      { error: { message: 'That code is not right, or was already used. Try the code your app shows now.', fields: [field] }, errorIn: form },
      400,
    );
  };

  router.post('/settings/two-factor/confirm', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, resendPage('/settings/two-factor', 'Go back to two-step sign-in'), allowSetup);
    if (!who) return;
    await withCode(req, res, who, 'confirm', async (code) => {
      const codes = await service().confirm(who.user.id, code);
      if (!codes) return false;
      await logFromSession(orm, who, req, clientAddress(req), { type: 'two_factor.changed', details: { change: 'turned_on' } });
      // Shown in this answer only (nothing keeps them to show again); the page after reloads without them.
      who.user.totpEnabledAt = new Date();
      await show(res, { ...who, twoFactorSetupNeeded: false }, { codes, notice: 'Two-step sign-in is on.' });
      return true;
    });
  });

  router.post('/settings/two-factor/recovery-codes', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, resendPage('/settings/two-factor', 'Go back to two-step sign-in'));
    if (!who) return;
    await withCode(req, res, who, 'regenerate', async (code) => {
      const codes = await service().regenerateRecoveryCodes(who.user.id, code);
      if (!codes) return false;
      await show(res, who, { codes, notice: 'New recovery codes made; the old ones no longer work.' });
      return true;
    });
  });

  router.post('/settings/two-factor/disable', sameOrigin, forms, async (req, res) => {
    const who = await guards.checkedPost(req, res, resendPage('/settings/two-factor', 'Go back to two-step sign-in'));
    if (!who) return;
    const requiredBy = await service().requiredBy(who.user.id);
    if (requiredBy.length) {
      const names = requiredBy.map((account) => account.name).join(', ');
      return show(res, who, { error: { message: `${names} requires two-step sign-in: it stays on.`, fields: [] } }, 409);
    }
    await withCode(req, res, who, 'disable', async (code) => {
      if (!(await service().disable(who.user.id, code))) return false;
      await logFromSession(orm, who, req, clientAddress(req), { type: 'two_factor.changed', details: { change: 'turned_off' } });
      res.redirect(303, '/settings/two-factor?off=1');
      return true;
    });
  });

  router.post('/settings/two-factor/require', sameOrigin, forms, async (req, res) => {
    const body = req.body as Record<string, string>;
    const who = await guards.checkedPost(req, res, guards.resendButton('/settings/two-factor/require', 'Save', ['require']));
    if (!who || !guards.allowedRole(res, who, ['owner'], 'Requiring two-step sign-in')) return;
    const require = body.require === 'on';
    // The owner first: requiring it without it would send them to set it up at once.
    if (require && !who.user.totpEnabledAt) {
      return show(res, who, { error: { message: 'Turn on two-step sign-in for yourself first, then require it of everyone.', fields: [] } }, 409);
    }
    await orm.em.fork().nativeUpdate(Account, { id: who.account.id }, { requireTwoFactor: require });
    await logFromSession(orm, who, req, clientAddress(req), { type: 'two_factor.changed', details: { change: require ? 'required' : 'not_required' } });
    res.redirect(303, `/settings/two-factor?required=${require ? 'on' : 'off'}`);
  });

  return router;
}
