import { MikroORM } from '@mikro-orm/postgresql';
import express, { Request, Response, Router } from 'express';
import { ApiError } from '../common/api-error';
import { ApiKey, KeyType } from '../modules/accounts/api-key.entity';
import { ApiKeyService } from '../modules/accounts/api-key.service';
import { sendErrorPage } from './web-errors';
import { generateFromForm, rollFromForm } from './key-actions';
import { keyFormValues } from './key-views';
import { keyForm, keysPage, KeysPageState, rollForm, rollPage } from './keys-page';
import { sameOrigin } from './web-auth';
import type { Guards } from './web-guards';
import type { SignedIn } from './web-session.service';
import { byMember, WebSessionService } from './web-session.service';

/** The address this request reached the service at, for the curl line (behind a proxy, as TRUST_PROXY lets express read it). */
export const originOf = (req: Request) => `${req.protocol}://${req.get('host')}`;

/**
 * Developers → API keys: generate (secret or restricted), roll, revoke. Served to a signed-in person
 * only, as pages: keys are never managed with a key.
 */
/** Who may see and change the account's API keys. */
const KEY_ROLES = ['owner', 'admin'] as const;

export function createKeysRouter(deps: { orm: MikroORM; encryptionKey: Buffer; guards: Guards }): Router {
  const router = Router();
  const { orm, encryptionKey, guards } = deps;
  const forms = express.urlencoded({ extended: false, limit: '16kb' });

  const showKeys = async (req: Request, who: SignedIn, state: Omit<KeysPageState, 'origin'> = {}) => {
    const keys = await new ApiKeyService(orm.em.fork()).list(who.account, who.session.livemode ? KeyType.live : KeyType.test);
    return keysPage(who, keys, { ...state, origin: originOf(req) });
  };
  /** One of the account's keys, or a 404 page (another account's id is as unknown as a made-up one). */
  const ownKey = async (res: Response, who: SignedIn, id: string): Promise<ApiKey | null> => {
    const key = await orm.em.fork().findOne(ApiKey, { id, account: who.account });
    if (!key) sendErrorPage(res, 404, 'Key not found', 'There is no such key in your account. It may have been typed wrong.');
    return key;
  };

  router.get('/settings/api-keys', async (req, res) => {
    const who = await guards.withSession(req, res);
    if (!who || !guards.allowedRole(res, who, KEY_ROLES, 'Managing API keys')) return;
    const created = await new WebSessionService(orm.em.fork()).takeNewKey(who.session, encryptionKey);
    res.send(await showKeys(req, who, { created }));
  });
  router.post('/settings/api-keys', sameOrigin, forms, async (req, res) => {
    const resend = (fresh: SignedIn, body: Record<string, string>) =>
      keyForm(fresh.session.csrfToken, body.type === 'live' ? 'live' : 'test', keyFormValues(body));
    const who = await guards.checkedPost(req, res, resend);
    if (!who || !guards.allowedRole(res, who, KEY_ROLES, 'Managing API keys')) return;
    const body = req.body as Record<string, string>;
    const error = await generateFromForm(orm.em.fork(), who, body, encryptionKey);
    if (!error) return void res.redirect(303, '/settings/api-keys');
    res.status(400).send(await showKeys(req, who, { error, values: keyFormValues(body) }));
  });

  router.get('/settings/api-keys/:id/roll', async (req, res) => {
    const who = await guards.withSession(req, res);
    if (!who || !guards.allowedRole(res, who, KEY_ROLES, 'Managing API keys')) return;
    const key = await ownKey(res, who, String(req.params.id));
    if (!key) return;
    if (key.revokedAt) return void res.redirect(303, '/settings/api-keys');
    res.send(rollPage(who, key));
  });
  router.post('/settings/api-keys/:id/roll', sameOrigin, forms, async (req, res) => {
    const id = String(req.params.id);
    const who = await guards.checkedPost(req, res, (fresh, body) => rollForm(fresh.session.csrfToken, { id, name: 'the key' }, body.expires_in_hours));
    if (!who || !guards.allowedRole(res, who, KEY_ROLES, 'Managing API keys')) return;
    const key = await ownKey(res, who, id);
    if (!key) return;
    const body = req.body as Record<string, string>;
    const error = await rollFromForm(orm.em.fork(), who, id, body, encryptionKey);
    if (error) return void res.status(400).send(rollPage(who, key, error, body.expires_in_hours));
    res.redirect(303, '/settings/api-keys');
  });

  router.post('/settings/api-keys/:id/revoke', sameOrigin, forms, async (req, res) => {
    const action = `/settings/api-keys/${encodeURIComponent(String(req.params.id))}/revoke`;
    const who = await guards.checkedPost(req, res, guards.resendButton(action, 'Revoke the key', [], 'Revoke this key? Requests using it will fail at once.'));
    if (!who || !guards.allowedRole(res, who, KEY_ROLES, 'Managing API keys')) return;
    try {
      await new ApiKeyService(orm.em.fork(), byMember(who)).revoke(String(req.params.id), who.account);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
    res.redirect(303, '/settings/api-keys');
  });
  return router;
}
