import { ApiError } from '../../common/api-error';

/** Largest amount accepted, in major units: keeps every minor-unit sum an exact JS integer. */
export const MAX_VALUE = 10_000_000_000_000;

/**
 * A JSON number in major units with at most 2 decimals, as hundredths (CONTRACT §1), read from
 * its decimal text so 0.1 stays 10 and never becomes 9.999…
 */
export function toMinorUnits(value: number, param: string): number {
  const text = Number.isFinite(value) ? String(value) : '';
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match || value > MAX_VALUE) {
    throw new ApiError('parameter_invalid', `${param} must be an amount from 0 to ${MAX_VALUE} with at most 2 decimals`, { param });
  }
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

export function fromMinorUnits(minor: number): number {
  return minor / 100;
}
