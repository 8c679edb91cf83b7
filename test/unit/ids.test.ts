import { ID_PREFIXES, IdKind, isId, newId } from '../../src/common/ids';

const CROCKFORD_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KINDS = Object.keys(ID_PREFIXES) as IdKind[];

describe('identifiers', () => {
  it('uses the contract prefixes', () => {
    expect(ID_PREFIXES).toMatchObject({
      lead: 'lead',
      deal: 'deal',
      proposal: 'prop',
      agent: 'agent',
      integration: 'int',
      webhook: 'wh',
      event: 'evt',
      request: 'req',
    });
    expect(newId('lead')).toMatch(/^lead_/);
    expect(newId('proposal')).toMatch(/^prop_/);
    expect(newId('integration')).toMatch(/^int_/);
    expect(newId('webhook')).toMatch(/^wh_/);
    expect(newId('event')).toMatch(/^evt_/);
    expect(newId('request')).toMatch(/^req_/);
  });

  it('has a 26-character Crockford base32 body after the prefix', () => {
    for (const kind of KINDS) {
      for (let i = 0; i < 50; i++) {
        const id = newId(kind);
        const [prefix, body, ...rest] = id.split('_');
        expect(prefix).toBe(ID_PREFIXES[kind]);
        expect(rest).toEqual([]);
        expect(body).toMatch(CROCKFORD_BODY); // no I, L, O or U; upper case only
        expect(isId(kind, id)).toBe(true);
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
    expect(isId('integration', `int_${body}`)).toBe(true);
    expect(isId('integration', `intx_${body}`)).toBe(false);
  });
});
