import { ApiError } from '../../src/common/api-error';
import { MAX_VALUE } from '../../src/modules/deals/money';
import { formatMoney } from '../../src/modules/proposals/proposal-pdf';
import { computeTotals, LineInput, MAX_QUANTITY, toThousandths } from '../../src/modules/proposals/proposal-totals';

/**
 * Proposal arithmetic (CONTRACT §1, §7): integer minor units, quantities and percentages in
 * thousandths, rounding half away from zero once per line, then the discount on the subtotal, then
 * the tax on (subtotal − discount). Every expected figure below is written out by hand or computed
 * by the independent integer reference in this file, never by the code under test.
 */

/** The ApiError a call throws (fails the test when it throws nothing or something else). */
function refusal(call: () => unknown): ApiError {
  let thrown: unknown;
  try {
    call();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ApiError);
  return thrown as ApiError;
}

function expectRefused(call: () => unknown, param: string): void {
  const error = refusal(call);
  expect(error.errorCode).toBe('parameter_invalid');
  expect(error.status).toBe(400);
  expect(error.param).toBe(param);
  expect(error.message.startsWith(param)).toBe(true);
}

const line = (quantity: number, unitPrice: number, description = 'Item'): LineInput => ({ description, quantity, unitPrice });

/** Totals of lines without discount or tax, as minor units. */
const plain = (lines: LineInput[]) => computeTotals(lines, 0, 0);

describe('toThousandths', () => {
  it.each([
    [0, 0],
    [1, 1000],
    [0.1, 100],
    [0.001, 1],
    [33.333, 33_333],
    [99.999, 99_999],
    [100, 100_000],
    [12.5, 12_500],
    [1_000_000, 1_000_000_000],
  ])('reads %p from its decimal text as %p thousandths', (value, expected) => {
    const result = toThousandths(value, 'discountPercent', MAX_QUANTITY, 'a number');
    expect(result).toBe(expected);
    expect(Number.isSafeInteger(result)).toBe(true);
  });

  it('reads values whose float product by 1000 drifts exactly (1.005, 4.35, 0.57)', () => {
    // 1.005 * 1000 = 1004.9999999999999, 4.35 * 1000 = 4349.999999999999, 0.57 * 1000 = 569.9999999999999
    expect(1.005 * 1000).not.toBe(1005);
    expect(toThousandths(1.005, 'q', 10, 'a quantity')).toBe(1005);
    expect(toThousandths(4.35, 'q', 10, 'a quantity')).toBe(4350);
    expect(toThousandths(0.57, 'q', 10, 'a quantity')).toBe(570);
  });

  it.each([
    ['more than 3 decimals', 0.0001],
    ['float noise (0.1 + 0.2)', 0.1 + 0.2],
    ['33.3333', 33.3333],
    ['a negative value', -1],
    ['a negative thousandth', -0.001],
    ['more than the maximum', 100.001],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['an exponent-form tiny value', 1e-7],
  ])('refuses %s (%p) as parameter_invalid naming the parameter', (_label, value) => {
    expectRefused(() => toThousandths(value, 'taxPercent', 100, 'a percentage'), 'taxPercent');
  });

  it('accepts exactly the maximum', () => {
    expect(toThousandths(100, 'discountPercent', 100, 'a percentage')).toBe(100_000);
    expect(toThousandths(MAX_QUANTITY, 'q', MAX_QUANTITY, 'a quantity')).toBe(MAX_QUANTITY * 1000);
  });
});

describe('computeTotals', () => {
  it('prices 3 × 0.10 as 0.30 (30 minor), not 0.30000000000000004', () => {
    expect(3 * 0.1).not.toBe(0.3);
    const totals = plain([line(3, 0.1)]);
    expect(totals.lines).toEqual([{ description: 'Item', quantityThousandths: 3000, unitPriceMinor: 10, amountMinor: 30 }]);
    expect(totals).toMatchObject({ subtotalMinor: 30, discountMinor: 0, taxMinor: 0, totalMinor: 30 });
  });

  it('prices 0.1 × 3.00 as 0.30 too', () => {
    const totals = plain([line(0.1, 3)]);
    expect(totals.lines[0]).toMatchObject({ quantityThousandths: 100, unitPriceMinor: 300, amountMinor: 30 });
    expect(totals.totalMinor).toBe(30);
  });

  it('sums three lines of 0.10 to exactly 30 minor (0.1 + 0.1 + 0.1 drifts in floating point)', () => {
    expect(0.1 + 0.1 + 0.1).not.toBe(0.3);
    const totals = plain([line(1, 0.1), line(1, 0.1), line(1, 0.1)]);
    expect(totals.lines.map((l) => l.amountMinor)).toEqual([10, 10, 10]);
    expect(totals.subtotalMinor).toBe(30);
    expect(totals.totalMinor).toBe(30);
  });

  it('takes 33.333 % of 100.00 as 33.33', () => {
    const totals = computeTotals([line(1, 100)], toThousandths(33.333, 'discountPercent', 100, 'a percentage'), 0);
    expect(totals).toMatchObject({ subtotalMinor: 10_000, discountMinor: 3_333, taxMinor: 0, totalMinor: 6_667 });
  });

  it('takes 33.333 % tax of 100.00 as 33.33, and 66.667 % as 66.67 (half-up at 6666.7)', () => {
    expect(computeTotals([line(1, 100)], 0, 33_333)).toMatchObject({ taxMinor: 3_333, totalMinor: 13_333 });
    expect(computeTotals([line(1, 100)], 0, 66_667)).toMatchObject({ taxMinor: 6_667, totalMinor: 16_667 });
  });

  it('handles one-third quantities: 0.333 × 1.00 = 0.33, 0.334 × 1.00 = 0.33, 0.333 × 10.00 = 3.33, 1/3 of 0.10 rounds to 0.03', () => {
    const totals = plain([line(0.333, 1), line(0.334, 1), line(0.333, 10), line(0.333, 0.1)]);
    // 33.3 → 33, 33.4 → 33, 333 → 333, 3.33 → 3
    expect(totals.lines.map((l) => l.amountMinor)).toEqual([33, 33, 333, 3]);
    expect(totals.subtotalMinor).toBe(402);
  });

  it('rounds each line, not the sum: three lines of 0.333 × 0.01 are 0 each, one line of 0.999 × 0.01 is 0.01', () => {
    expect(plain([line(0.333, 0.01), line(0.333, 0.01), line(0.333, 0.01)]).subtotalMinor).toBe(0);
    expect(plain([line(0.999, 0.01)]).subtotalMinor).toBe(1);
  });

  it('rounds half away from zero at exactly .5 of a cent: 0.5 × 0.01 = 0.01, 0.5 × 0.03 = 0.02, 0.5 × 0.05 = 0.03', () => {
    const totals = plain([line(0.5, 0.01), line(0.5, 0.03), line(0.5, 0.05)]);
    expect(totals.lines.map((l) => l.amountMinor)).toEqual([1, 2, 3]);
  });

  it('rounds just below .5 down: 0.499 × 0.01 = 0.00, 1.004 × 1.00 = 1.00', () => {
    expect(plain([line(0.499, 0.01)]).subtotalMinor).toBe(0);
    expect(plain([line(1.004, 1)]).subtotalMinor).toBe(100);
  });

  it('rounds 1.005 × 1.00 up to 1.01 where floating point (100.49999…) would round down', () => {
    expect(Math.round(1.005 * 1 * 100)).toBe(100); // the drift this code avoids
    expect(plain([line(1.005, 1)]).lines[0].amountMinor).toBe(101);
  });

  it('rounds the discount and the tax half away from zero', () => {
    // 50 % of 0.01 = 0.005 → 0.01; then nothing is left to tax.
    expect(computeTotals([line(1, 0.01)], 50_000, 10_000)).toMatchObject({ subtotalMinor: 1, discountMinor: 1, taxMinor: 0, totalMinor: 0 });
    // 12.5 % tax on 0.04 = 0.005 → 0.01.
    expect(computeTotals([line(1, 0.04)], 0, 12_500)).toMatchObject({ taxMinor: 1, totalMinor: 5 });
    // 12.499 % tax on 0.04 = 0.0049996 → 0.00.
    expect(computeTotals([line(1, 0.04)], 0, 12_499)).toMatchObject({ taxMinor: 0, totalMinor: 4 });
  });

  it('applies the tax after the discount: 200.00 − 10 % = 180.00, + 20 % tax = 216.00 (not 220.00)', () => {
    const totals = computeTotals([line(2, 100)], 10_000, 20_000);
    expect(totals).toMatchObject({ subtotalMinor: 20_000, discountMinor: 2_000, taxMinor: 3_600, totalMinor: 21_600 });
  });

  it('rounds the discount before taxing what is left', () => {
    // subtotal 0.03; 50 % discount = 1.5 → 2 minor; 100 % tax on the 1 minor left = 1; total 2.
    // Taxing the unrounded 1.5 would give 2 (total 3); taxing the subtotal would give 3 (total 4).
    expect(computeTotals([line(1, 0.03)], 50_000, 100_000)).toMatchObject({ subtotalMinor: 3, discountMinor: 2, taxMinor: 1, totalMinor: 2 });
    // subtotal 0.99; 33.333 % discount = 32.99967 → 33; 10 % tax of 66 = 6.6 → 7; total 73.
    expect(computeTotals([line(1, 0.99)], 33_333, 10_000)).toMatchObject({ discountMinor: 33, taxMinor: 7, totalMinor: 73 });
  });

  it('a 100 % discount leaves nothing, taxed or not', () => {
    const totals = computeTotals([line(3, 33.33), line(0.5, 0.01)], 100_000, 25_000);
    expect(totals).toMatchObject({ subtotalMinor: 10_000, discountMinor: 10_000, taxMinor: 0, totalMinor: 0 });
  });

  it('0 % discount and 0 % tax change nothing; 100 % tax doubles', () => {
    expect(computeTotals([line(1, 12.34)], 0, 0)).toMatchObject({ subtotalMinor: 1234, discountMinor: 0, taxMinor: 0, totalMinor: 1234 });
    expect(computeTotals([line(1, 12.34)], 0, 100_000)).toMatchObject({ taxMinor: 1234, totalMinor: 2468 });
  });

  it('prices 1,000,000 × 9,999,999.99 exactly as 9,999,999,990,000.00', () => {
    const totals = plain([line(1_000_000, 9_999_999.99)]);
    expect(totals.lines[0]).toMatchObject({ quantityThousandths: 1_000_000_000, unitPriceMinor: 999_999_999, amountMinor: 999_999_999_000_000 });
    expect(totals.totalMinor).toBe(999_999_999_000_000);
    expect(Number.isSafeInteger(totals.totalMinor)).toBe(true);
  });

  it('keeps large quantities with decimals exact: 999,999.999 × 99,999.99', () => {
    // 999999999 thousandths × 9999999 hundredths / 1000 = 9999998990000.001 → 9,999,998,990,000 minor
    const totals = plain([line(999_999.999, 99_999.99)]);
    expect(totals.lines[0].amountMinor).toBe(9_999_998_990_000);
    expect(BigInt(totals.lines[0].amountMinor)).toBe((999_999_999n * 9_999_999n + 500n) / 1000n);
  });

  it('accepts a total of exactly MAX_VALUE, with tax on a discounted total inside the limit', () => {
    expect(plain([line(1, MAX_VALUE)]).totalMinor).toBe(MAX_VALUE * 100);
    expect(plain([line(1_000_000, 10_000_000)]).totalMinor).toBe(MAX_VALUE * 100);
    expect(computeTotals([line(1, MAX_VALUE)], 50_000, 100_000)).toMatchObject({
      discountMinor: (MAX_VALUE / 2) * 100,
      taxMinor: (MAX_VALUE / 2) * 100,
      totalMinor: MAX_VALUE * 100,
    });
  });

  it('refuses a line beyond MAX_VALUE, naming the line', () => {
    expectRefused(() => plain([line(1, 1), line(1_000_000, 10_000_000.01)]), 'lineItems.1');
  });

  it('refuses a subtotal beyond MAX_VALUE even when every line is within it', () => {
    expectRefused(() => plain([line(1_000_000, 9_999_999.99), line(1_000_000, 9_999_999.99)]), 'lineItems');
  });

  it('refuses a taxed total beyond MAX_VALUE', () => {
    expect(() => computeTotals([line(1, MAX_VALUE)], 0, 1)).toThrow(ApiError);
    const error = refusal(() => computeTotals([line(1, MAX_VALUE)], 0, 1));
    expect(error.errorCode).toBe('parameter_invalid');
    // The lines alone fit: the tax pushed it over, so the tax is what the client must change.
    expect(error.param).toBe('taxPercent');
  });

  it('refuses a unit price above MAX_VALUE and a quantity above MAX_QUANTITY', () => {
    expectRefused(() => plain([line(1, MAX_VALUE + 1)]), 'lineItems.0.unitPrice');
    expectRefused(() => plain([line(MAX_QUANTITY + 0.001, 1)]), 'lineItems.0.quantity');
  });

  it.each([
    ['a zero quantity', line(0, 10), 'quantity'],
    ['a negative quantity', line(-1, 10), 'quantity'],
    ['a quantity with 4 decimals', line(1.0001, 10), 'quantity'],
    ['a quantity carrying float noise', line(0.1 + 0.2, 10), 'quantity'],
    ['a NaN quantity', line(NaN, 10), 'quantity'],
    ['a negative unit price', line(1, -0.01), 'unitPrice'],
    ['a unit price with 3 decimals', line(1, 1.005), 'unitPrice'],
    ['an infinite unit price', line(1, Infinity), 'unitPrice'],
  ])('refuses %s, naming lineItems.<index>.<field>', (_label, bad, field) => {
    expectRefused(() => plain([line(1, 1), line(2, 2), bad]), `lineItems.2.${field}`);
    expectRefused(() => plain([bad]), `lineItems.0.${field}`);
  });

  it('names the zero quantity as "more than 0"', () => {
    expect(refusal(() => plain([line(0, 1)])).message).toMatch(/more than 0/);
  });

  it('accepts a unit price of 0 and the smallest quantity, 0.001', () => {
    expect(plain([line(5, 0)]).totalMinor).toBe(0);
    expect(plain([line(0.001, 10)]).lines[0]).toMatchObject({ quantityThousandths: 1, amountMinor: 1 }); // 0.01 exactly
    expect(plain([line(0.001, 4.99)]).lines[0].amountMinor).toBe(0); // 0.499 of a cent
  });

  it('keeps descriptions and order', () => {
    const totals = plain([line(1, 1, 'First'), line(2, 2, 'Second 日本'), line(3, 3, 'Third')]);
    expect(totals.lines.map((l) => l.description)).toEqual(['First', 'Second 日本', 'Third']);
    expect(totals.lines.map((l) => l.amountMinor)).toEqual([100, 400, 900]);
  });

  describe('a sum of many lines equals an independent integer computation', () => {
    /** Deterministic pseudo-random integers (mulberry32), so a failure reproduces. */
    function random(seed: number): (below: number) => number {
      let state = seed >>> 0;
      return (below) => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
      };
    }

    /** n / d rounded half up, for n ≥ 0, d > 0, by quotient and remainder. */
    function roundedQuotient(n: bigint, d: bigint): bigint {
      const q = n / d;
      return (n % d) * 2n >= d ? q + 1n : q;
    }

    /** Writes an integer count of 10^-places units as the decimal a JSON client would send. */
    function decimal(units: number, places: number): number {
      const scale = 10 ** places;
      const whole = Math.floor(units / scale);
      const fraction = String(units % scale)
        .padStart(places, '0')
        .replace(/0+$/, '');
      return Number(fraction ? `${whole}.${fraction}` : `${whole}`);
    }

    it.each([1, 2, 3, 4, 5])('seed %p: 300 lines of awkward quantities and prices, with discount and tax', (seed) => {
      const next = random(seed);
      const reference: Array<{ q: bigint; p: bigint }> = [];
      const lines: LineInput[] = [];
      for (let i = 0; i < 300; i++) {
        const qThousandths = 1 + next(5_000_000); // 0.001 … 5000.000
        const priceHundredths = next(10_000_000); // 0.00 … 99,999.99
        reference.push({ q: BigInt(qThousandths), p: BigInt(priceHundredths) });
        lines.push(line(decimal(qThousandths, 3), decimal(priceHundredths, 2), `Line ${i}`));
      }
      const discount = next(100_001); // 0 … 100.000 %
      const tax = next(100_001);

      const amounts = reference.map(({ q, p }) => roundedQuotient(q * p, 1000n));
      const subtotal = amounts.reduce((sum, a) => sum + a, 0n);
      const discountMinor = roundedQuotient(subtotal * BigInt(discount), 100_000n);
      const taxMinor = roundedQuotient((subtotal - discountMinor) * BigInt(tax), 100_000n);

      const totals = computeTotals(lines, discount, tax);
      expect(totals.lines.map((l) => BigInt(l.amountMinor))).toEqual(amounts);
      expect(totals.lines.map((l) => [l.quantityThousandths, l.unitPriceMinor])).toEqual(reference.map(({ q, p }) => [Number(q), Number(p)]));
      expect(BigInt(totals.subtotalMinor)).toBe(subtotal);
      expect(BigInt(totals.discountMinor)).toBe(discountMinor);
      expect(BigInt(totals.taxMinor)).toBe(taxMinor);
      expect(BigInt(totals.totalMinor)).toBe(subtotal - discountMinor + taxMinor);
      for (const value of [totals.subtotalMinor, totals.discountMinor, totals.taxMinor, totals.totalMinor]) expect(Number.isSafeInteger(value)).toBe(true);
    });

    it('500 lines of 0.1 × 0.10 … : every line 0.01, sum 5.00', () => {
      const totals = plain(Array.from({ length: 500 }, () => line(0.1, 0.1)));
      expect(totals.lines.every((l) => l.amountMinor === 1)).toBe(true); // 0.1 × 10 minor = 1 minor
      expect(totals.subtotalMinor).toBe(500);
    });
  });
});

describe('formatMoney (as the PDF prints figures)', () => {
  it.each([
    [0, 'USD', 'USD 0.00'],
    [1, 'USD', 'USD 0.01'],
    [10, 'USD', 'USD 0.10'],
    [99, 'USD', 'USD 0.99'],
    [100, 'USD', 'USD 1.00'],
    [123_450, 'USD', 'USD 1,234.50'],
    [100_000, 'EUR', 'EUR 1,000.00'],
    [99_999_999, 'CHF', 'CHF 999,999.99'],
    [123_456_789, 'GBP', 'GBP 1,234,567.89'],
    [999_999_999_000_000, 'USD', 'USD 9,999,999,990,000.00'],
    [MAX_VALUE * 100, 'USD', 'USD 10,000,000,000,000.00'],
    [Number.MAX_SAFE_INTEGER, 'USD', 'USD 90,071,992,547,409.91'],
  ])('formats %p minor %s as %p', (minor, currency, expected) => {
    expect(formatMoney(minor, currency)).toBe(expected);
  });

  it('agrees with an independent formatting of many amounts', () => {
    const group = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    for (const minor of [5, 105, 1_005, 10_005, 1_000_001, 12_345_678_901, 700_000_000_000_07]) {
      const text = String(minor).padStart(3, '0');
      expect(formatMoney(minor, 'USD')).toBe(`USD ${group(text.slice(0, -2))}.${text.slice(-2)}`);
    }
  });
});
