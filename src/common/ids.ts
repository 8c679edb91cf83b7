import { uuidv7obj } from 'uuidv7';

/**
 * The prefix of an identifier (CONTRACT §1): `lead`, `deal`, `prop`, `agent`, `int`, `wh`, `evt`,
 * `req`… Each entity names its own where its id is made (`id = newId('lead')`); a unit test checks
 * that no two entities share one and that the contract's are used where it says.
 */
export type IdPrefix = string;

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

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timeSortableBody()}`;
}

/** True when `id` has this prefix and the shape of an id; anything else is simply not found. */
export function isId(prefix: IdPrefix, id: string): boolean {
  return id.length === prefix.length + 27 && id.startsWith(prefix) && id[prefix.length] === '_' && BODY.test(id.slice(prefix.length + 1));
}
