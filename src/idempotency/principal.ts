import type { Authenticated } from '../modules/accounts/api-key.service';

/**
 * Whom an Idempotency-Key belongs to: the API key's id (kept when the key is rolled, so a retry
 * sent with the new value still replays), or the signed-in member's user id for the web app's session (`web` before members). Keys are scoped per
 * caller rather than per account (Stripe's scope) because a stored answer can hold what only its
 * caller was given (a webhook's signing secret), and because two clients of one account must not
 * collide on, or learn of, each other's keys (docs/DECISIONS.md, "Idempotency keys").
 */
export function principalOf(auth: Authenticated): string {
  return auth.key?.id ?? auth.member?.id ?? 'web';
}
