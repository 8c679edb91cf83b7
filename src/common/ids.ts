import { uuidv7obj } from 'uuidv7';

/** Prefixes of every public identifier (CONTRACT §1). */
export const ID_PREFIXES = {
  account: 'acct',
  apiKey: 'key',
  lead: 'lead',
  deal: 'deal',
  proposal: 'prop',
  agent: 'agent',
  integration: 'int',
  webhook: 'wh',
  event: 'evt',
  request: 'req',
  idempotencyKey: 'idem',
  stageChange: 'stg',
  coSell: 'cosell',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** A UUIDv7 written in Crockford base32 (26 characters, like a ULID): sorts by creation time. */
function timeSortableBody(): string {
  const bytes = uuidv7obj().bytes;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${timeSortableBody()}`;
}

/** True when `id` has the prefix and shape of `kind`; anything else is simply not found. */
export function isId(kind: IdKind, id: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return id.startsWith(prefix) && BODY.test(id.slice(prefix.length));
}
