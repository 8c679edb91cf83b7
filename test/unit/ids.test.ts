import { isId, newId } from '../../src/common/ids';
import { ENTITIES } from '../../src/app/modules';

const CROCKFORD_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The prefix of each entity's ids, read off a new instance (each entity names its own where its id is made). */
function entityPrefixes(): Map<string, string> {
  const prefixes = new Map<string, string>();
  for (const entity of ENTITIES) {
    if (Object.getPrototypeOf(entity) === Function.prototype && entity.name.endsWith('Entity')) continue; // the abstract bases
    const id = new (entity as new () => { id?: unknown })().id;
    if (typeof id === 'string') prefixes.set(entity.name, id.split('_')[0]);
  }
  return prefixes;
}

describe('identifiers', () => {
  it('uses the contract prefixes (CONTRACT §1), and no two entities share one', () => {
    const prefixes = entityPrefixes();
    expect(Object.fromEntries(['Lead', 'Deal', 'Proposal', 'Agent', 'Integration', 'Webhook', 'Event'].map((name) => [name, prefixes.get(name)]))).toEqual({
      Lead: 'lead',
      Deal: 'deal',
      Proposal: 'prop',
      Agent: 'agent',
      Integration: 'int',
      Webhook: 'wh',
      Event: 'evt',
    });
    const used = [...prefixes.values()];
    expect(new Set(used).size).toBe(used.length);
    expect(used).not.toContain('req'); // request ids (X-Request-Id) have it to themselves
    expect(newId('req')).toMatch(/^req_/);
  });

  it('has a 26-character Crockford base32 body after the prefix', () => {
    for (const prefix of [...entityPrefixes().values(), 'req']) {
      for (let i = 0; i < 50; i++) {
        const id = newId(prefix);
        const [head, body, ...rest] = id.split('_');
        expect(head).toBe(prefix);
        expect(rest).toEqual([]);
        expect(body).toMatch(CROCKFORD_BODY); // no I, L, O or U; upper case only
        expect(isId(prefix, id)).toBe(true);
      }
    }
  });

  it('is unique', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('lead')));
    expect(ids.size).toBe(10_000);
  });

  it('sorts by creation time, within one millisecond as well as across milliseconds', async () => {
    const burst = Array.from({ length: 2_000 }, () => newId('lead'));
    expect([...burst].sort()).toEqual(burst);
    const spaced: string[] = [];
    for (let i = 0; i < 5; i++) {
      spaced.push(newId('deal'));
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect([...spaced].sort()).toEqual(spaced);
  });

  it('encodes the creation time in the leading characters (UUIDv7 milliseconds)', () => {
    const before = Date.now();
    const body = newId('lead').slice('lead_'.length);
    const after = Date.now();
    const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    let value = 0n;
    for (const char of body) value = value * 32n + BigInt(alphabet.indexOf(char));
    const millis = Number(value >> 80n); // 128-bit UUID: the top 48 bits are Unix milliseconds
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(after);
  });

  it('isId rejects the wrong prefix or shape', () => {
    const id = newId('lead');
    const body = id.slice('lead_'.length);
    expect(isId('lead', id)).toBe(true);
    expect(isId('deal', id)).toBe(false);
    expect(isId('lead', `deal_${body}`)).toBe(false);
    expect(isId('lead', `LEAD_${body}`)).toBe(false);
    expect(isId('lead', `lead${body}`)).toBe(false);
    expect(isId('lead', `lead_${body.toLowerCase()}`)).toBe(false);
    expect(isId('lead', `lead_${body.slice(1)}`)).toBe(false);
    expect(isId('lead', `lead_${body}0`)).toBe(false);
    for (const forbidden of ['I', 'L', 'O', 'U', '-', '_', ' ']) {
      expect(isId('lead', `lead_${forbidden}${body.slice(1)}`)).toBe(false);
    }
    expect(isId('lead', ' ' + id)).toBe(false);
    expect(isId('lead', id + '\n')).toBe(false);
    expect(isId('lead', 'lead_')).toBe(false);
    expect(isId('lead', '')).toBe(false);
    expect(isId('lead', "lead_' OR 1=1 --")).toBe(false);
    expect(isId('int', `int_${body}`)).toBe(true);
    expect(isId('int', `intx_${body}`)).toBe(false);
  });
});
