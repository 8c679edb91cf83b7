import { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../common/api-error';
import { KeyType } from '../modules/accounts/api-key.entity';
import { byMember } from './web-session.service';
import { ApiKeyService } from '../modules/accounts/api-key.service';
import { isLevel, KeyPermissions, Level, RESOURCES } from '../modules/accounts/key-permissions';
import { FormError } from './web-forms';
import type { SignedIn } from './web-session.service';
import { WebSessionService } from './web-session.service';

/**
 * Generates the key a posted form asks for (the keys page's or the welcome page's) and stashes its
 * value, encrypted, for the next page to show once. The answer is the form's error, if any: the
 * service's own words for the name, ours for the choices it cannot see.
 */
export async function generateFromForm(em: EntityManager, who: SignedIn, body: Record<string, string>, encryptionKey: Buffer): Promise<FormError | null> {
  const { name = '', type = '', kind = 'secret' } = body;
  if (type !== KeyType.test && type !== KeyType.live) return { message: 'Choose a test or live key.', fields: ['type'] };
  if (kind !== 'secret' && kind !== 'restricted') return { message: 'Choose a secret or a restricted key.', fields: ['kind'] };
  let permissions: KeyPermissions | null = null;
  if (kind === 'restricted') {
    const levels = RESOURCES.map((resource) => [resource, body[`perm_${resource}`] ?? 'none'] as const);
    const bad = levels.find(([, level]) => !isLevel(level));
    if (bad) return { message: `Choose none, read or write for ${bad[0]}.`, fields: [`perm_${bad[0]}`] };
    // A key that may do nothing is refused by every route: surely not what was meant.
    if (levels.every(([, level]) => level === 'none')) {
      return { message: 'Give the restricted key at least one permission (read or write on a resource).', fields: RESOURCES.map((r) => `perm_${r}`) };
    }
    permissions = Object.fromEntries(levels) as Record<(typeof RESOURCES)[number], Level>;
  }
  try {
    const { secret } = await new ApiKeyService(em, byMember(who)).create(who.account, type, name, permissions);
    await new WebSessionService(em).stashNewKey(who.session, { secret, name: name.trim() }, encryptionKey);
    return null;
  } catch (error) {
    if (error instanceof ApiError) return { message: `The key was not created: ${error.message}.`, fields: ['name'] };
    throw error;
  }
}

/** Rolls one of the account's keys as the roll form asks; the new value is stashed to be shown once. */
export async function rollFromForm(
  em: EntityManager,
  who: SignedIn,
  id: string,
  body: Record<string, string>,
  encryptionKey: Buffer,
): Promise<FormError | null> {
  const hours = Number(body.expires_in_hours ?? '0');
  try {
    const { key, secret } = await new ApiKeyService(em, byMember(who)).roll(id, hours, who.account);
    const oldExpiresAt = key.previousSecretExpiresAt?.toISOString();
    await new WebSessionService(em).stashNewKey(who.session, { secret, name: key.name, rolled: true, oldExpiresAt }, encryptionKey);
    return null;
  } catch (error) {
    if (error instanceof ApiError)
      return { message: `The key was not rolled: ${error.message}.`, fields: [error.param === 'expiresInHours' ? 'expires_in_hours' : 'id'] };
    throw error;
  }
}
