import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** AES-256-GCM with the recommended 96-bit nonce and the full 128-bit authentication tag. */
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {
  constructor() {
    // Deliberately vague: which check failed (length, tag, JSON) is of no use to anyone but an attacker.
    super('The encrypted value could not be decrypted: wrong key, or it was altered');
    this.name = 'DecryptionError';
  }
}

function checkKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new Error(`The encryption key must be ${KEY_BYTES} bytes`);
}

/**
 * Encrypts a JSON object for storage: base64 of iv (12 bytes) | auth tag (16 bytes) | ciphertext.
 * A fresh random IV per call, so the same object never encrypts to the same text (and GCM never
 * sees a repeated nonce under one key).
 */
export function encryptJson(value: Record<string, unknown>, key: Buffer): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

/** The object encryptJson stored; throws DecryptionError for a wrong key or any altered byte. */
export function decryptJson<T extends Record<string, unknown> = Record<string, unknown>>(stored: string, key: Buffer): T {
  checkKey(key);
  const data = Buffer.from(stored, 'base64');
  // Buffer.from ignores characters that are not base64; re-encoding tells a clean value from a mangled one.
  if (data.length < IV_BYTES + TAG_BYTES || data.toString('base64') !== stored) throw new DecryptionError();
  const iv = data.subarray(0, IV_BYTES);
  const tag = data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const ciphertext = data.subarray(IV_BYTES + TAG_BYTES);
  let plaintext: string;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new DecryptionError();
  }
  const value: unknown = JSON.parse(plaintext);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DecryptionError();
  return value as T;
}
