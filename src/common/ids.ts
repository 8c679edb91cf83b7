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
  delivery: 'whdel',
  attempt: 'whatt',
  request: 'req',
  idempotencyKey: 'idem',
  stageChange: 'stg',
  agentRun: 'arun',
  agentTask: 'atask',
  leadModel: 'lsm',
  coSell: 'cosell',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * A UUIDv7 written in Crockford base32 (26 characters, like a ULID): sorts by creation time. Five
 * bits at a time from the low end, in plain integers (every request mints one, so no BigInt).
 */
function timeSortableBody(): string {
  const bytes = uuidv7obj().bytes;
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = bytes.length - 1; i >= 0; i--) {
    buffer |= bytes[i] << bits;
    bits += 8;
    while (bits >= 5) {
      out = CROCKFORD[buffer & 31] + out;
      buffer >>>= 5;
      bits -= 5;
    }
  }
  return CROCKFORD[buffer & 31] + out; // the top 3 of 128 bits
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${timeSortableBody()}`;
}

/** True when `id` has the prefix and shape of `kind`; anything else is simply not found. */
export function isId(kind: IdKind, id: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return id.startsWith(prefix) && BODY.test(id.slice(prefix.length));
}
