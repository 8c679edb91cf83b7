import { randomFillSync } from 'node:crypto';
import { V7Generator } from 'uuidv7';

/**
 * The prefix of an identifier (CONTRACT §1): `lead`, `deal`, `prop`, `agent`, `int`, `wh`, `evt`,
 * `req`… Each entity names its own where its id is made (`id = newId('lead')`); a unit test checks
 * that no two entities share one and that the contract's are used where it says.
 */
export type IdPrefix = string;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * The generator's randomness, drawn from crypto 1 KiB at a time: the library's default draws 32
 * bytes a call, so every few ids paid a call into crypto (0.6 % of a single read's profile, where
 * every request mints its X-Request-Id). The same source (crypto's CSPRNG), fewer calls.
 */
class PooledRandom {
  private readonly pool = new Uint32Array(256);
  private cursor = this.pool.length;

  nextUint32(): number {
    if (this.cursor === this.pool.length) {
      randomFillSync(this.pool);
      this.cursor = 0;
    }
    return this.pool[this.cursor++];
  }
}

const generator = new V7Generator(new PooledRandom());

/** The alphabet's characters as bytes, and the 26 of an id being written (one string made from them). */
const CROCKFORD_BYTES = Buffer.from(CROCKFORD, 'latin1');
const body = Buffer.alloc(26);

/**
 * A UUIDv7 written in Crockford base32 (26 characters, like a ULID): sorts by creation time. Five
 * bits at a time from the low end, in plain integers (every request mints one, so no BigInt), into
 * a buffer read once as a string: prepending character by character made a string per character
 * (2 KB of a single read's 112 KB of allocations, docs/benchmark.md, eleventh pass).
 */
function timeSortableBody(): string {
  const bytes = generator.generate().bytes;
  let at = body.length;
  let buffer = 0;
  let bits = 0;
  for (let i = bytes.length - 1; i >= 0; i--) {
    buffer |= bytes[i] << bits;
    bits += 8;
    while (bits >= 5) {
      body[--at] = CROCKFORD_BYTES[buffer & 31];
      buffer >>>= 5;
      bits -= 5;
    }
  }
  body[--at] = CROCKFORD_BYTES[buffer & 31]; // the top 3 of 128 bits
  return body.toString('latin1');
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timeSortableBody()}`;
}

/** True when `id` has this prefix and the shape of an id; anything else is simply not found. */
export function isId(prefix: IdPrefix, id: string): boolean {
  return id.length === prefix.length + 27 && id.startsWith(prefix) && id[prefix.length] === '_' && BODY.test(id.slice(prefix.length + 1));
}
