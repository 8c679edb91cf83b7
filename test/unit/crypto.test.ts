import { createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptionError, decryptJson, encryptJson } from '../../src/common/crypto';

const KEY = Buffer.from('0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', 'hex');
const SECRET = { client_id: 'abc', client_secret: 'super-secret-value-1234', nested: { n: 1, list: [true, null] } };

/** Flips one bit of the stored value at byte `index` (after base64 decoding). */
function flipBit(stored: string, index: number): string {
  const bytes = Buffer.from(stored, 'base64');
  bytes[index] ^= 0x01;
  return bytes.toString('base64');
}

describe('encryptJson / decryptJson (AES-256-GCM)', () => {
  it('round-trips a JSON object', () => {
    expect(decryptJson(encryptJson(SECRET, KEY), KEY)).toEqual(SECRET);
    expect(decryptJson(encryptJson({}, KEY), KEY)).toEqual({});
    const unicode = { password: 'pässwörd 🔐 ключ' };
    expect(decryptJson(encryptJson(unicode, KEY), KEY)).toEqual(unicode);
  });

  it('stores base64 of iv (12) | tag (16) | ciphertext, which standard AES-256-GCM decrypts', () => {
    const stored = encryptJson(SECRET, KEY);
    expect(stored).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const bytes = Buffer.from(stored, 'base64');
    const plaintext = JSON.stringify(SECRET);
    // GCM is a stream mode: ciphertext is exactly as long as the plaintext.
    expect(bytes.length).toBe(12 + 16 + Buffer.byteLength(plaintext));
    const decipher = createDecipheriv('aes-256-gcm', KEY, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    expect(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')).toBe(plaintext);
  });

  it('never shows the plaintext in the stored value', () => {
    const stored = encryptJson(SECRET, KEY);
    expect(stored).not.toContain('super-secret-value-1234');
    expect(Buffer.from(stored, 'base64').toString('latin1')).not.toContain('super-secret');
    expect(Buffer.from(stored, 'base64').toString('latin1')).not.toContain('client_secret');
  });

  it('uses a fresh random IV each time: the same object never encrypts to the same text', () => {
    const values = Array.from({ length: 50 }, () => encryptJson(SECRET, KEY));
    expect(new Set(values).size).toBe(50);
    expect(new Set(values.map((v) => Buffer.from(v, 'base64').subarray(0, 12).toString('hex'))).size).toBe(50);
    for (const value of values) expect(decryptJson(value, KEY)).toEqual(SECRET);
  });

  it('throws for a wrong key', () => {
    const stored = encryptJson(SECRET, KEY);
    expect(() => decryptJson(stored, randomBytes(32))).toThrow(DecryptionError);
  });

  it('throws when any part is altered: iv, tag or ciphertext', () => {
    const stored = encryptJson(SECRET, KEY);
    const length = Buffer.from(stored, 'base64').length;
    for (const index of [0, 11, 12, 27, 28, length - 1]) {
      expect(() => decryptJson(flipBit(stored, index), KEY)).toThrow(DecryptionError);
    }
  });

  it('throws for truncated, extended, empty or non-base64 values', () => {
    const stored = encryptJson(SECRET, KEY);
    const bytes = Buffer.from(stored, 'base64');
    expect(() => decryptJson(bytes.subarray(0, bytes.length - 1).toString('base64'), KEY)).toThrow(DecryptionError);
    expect(() => decryptJson(Buffer.concat([bytes, Buffer.from([0])]).toString('base64'), KEY)).toThrow(DecryptionError);
    expect(() => decryptJson(bytes.subarray(0, 27).toString('base64'), KEY)).toThrow(DecryptionError);
    expect(() => decryptJson('', KEY)).toThrow(DecryptionError);
    expect(() => decryptJson(`${stored.slice(0, 10)}!${stored.slice(10)}`, KEY)).toThrow(DecryptionError);
  });

  it('does not leak the plaintext or key in its error message', () => {
    const stored = encryptJson(SECRET, KEY);
    try {
      decryptJson(flipBit(stored, 40), KEY);
      throw new Error('expected a DecryptionError');
    } catch (error) {
      expect(error).toBeInstanceOf(DecryptionError);
      expect((error as Error).message).not.toContain('super-secret');
      expect((error as Error).message).not.toContain(KEY.toString('hex'));
    }
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => encryptJson(SECRET, randomBytes(16))).toThrow(/32 bytes/);
    expect(() => encryptJson(SECRET, Buffer.alloc(0))).toThrow(/32 bytes/);
    expect(() => decryptJson(encryptJson(SECRET, KEY), randomBytes(31))).toThrow(/32 bytes/);
  });
});
