import { Webhook as StandardWebhook } from 'standardwebhooks';
import { decryptJson } from '../../common/crypto';
import type { Webhook } from './webhook.entity';

/**
 * The secrets a delivery is signed with now: the current one, and the previous one while it has not
 * expired (after roll_secret), so a receiver still verifying with the old secret loses nothing.
 * `webhook` must have secretEncrypted and previousSecretEncrypted loaded (both are lazy).
 */
export function signingSecrets(webhook: Webhook, encryptionKey: Buffer, now: Date): string[] {
  const secrets = [decryptJson<{ secret: string }>(webhook.secretEncrypted, encryptionKey).secret];
  if (webhook.previousSecretEncrypted && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > now) {
    secrets.push(decryptJson<{ secret: string }>(webhook.previousSecretEncrypted, encryptionKey).secret);
  }
  return secrets;
}

/**
 * The Standard Webhooks headers of one attempt. `webhook-signature` carries one `v1,…` signature per
 * secret, separated by spaces, as the spec allows; a verifier accepts the payload when any matches.
 */
export function signedHeaders(eventId: string, body: string, secrets: readonly string[], timestamp: Date): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new StandardWebhook(secret).sign(eventId, timestamp, body)).join(' '),
  };
}
