import { ApiError } from '../../src/common/api-error';
import { fromMinorUnits, MAX_VALUE, toMinorUnits } from '../../src/modules/deals/money';

/** Money as exact hundredths (CONTRACT §1): read from the decimal text, never by multiplying floats. */

describe('toMinorUnits', () => {
  it.each([
    [0.1, 10],
    [0.29, 29], // 0.29 * 100 = 28.999999999999996 in floating point
    [19.99, 1999], // 19.99 * 100 = 1998.9999999999998
    [1e13, 1_000_000_000_000_000],
    [12500.5, 1_250_050],
    [0, 0],
    [1, 100],
    [1.1, 110],
    [1000, 100_000],
    [999.99, 99_999],
  ])('converts %p exactly to %p', (value, minor) => {
    const result = toMinorUnits(value, 'value');
    expect(result).toBe(minor);
    expect(Number.isSafeInteger(result)).toBe(true);
  });

  it('accepts the maximum and it is 1e13', () => {
    expect(MAX_VALUE).toBe(1e13);
    expect(toMinorUnits(MAX_VALUE, 'value')).toBe(MAX_VALUE * 100);
  });

  it.each([
    ['more than 2 decimals', 1.005],
    ['a negative amount', -1],
    ['a negative cent', -0.01],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['more than the maximum', 1e13 + 1],
    ['a tiny amount written in exponent form', 1e-7],
    ['a huge amount written in exponent form', 1e21],
  ])('refuses %s (%p) as parameter_invalid naming the parameter', (_label, value) => {
    let thrown: unknown;
    try {
      toMinorUnits(value, 'minValue');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect(error.errorCode).toBe('parameter_invalid');
    expect(error.param).toBe('minValue');
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^minValue /);
  });

  it('round-trips through fromMinorUnits', () => {
    for (const value of [0, 0.1, 0.29, 19.99, 12500.5, 1e13]) expect(fromMinorUnits(toMinorUnits(value, 'value'))).toBe(value);
  });
});
