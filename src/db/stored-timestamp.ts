/**
 * A timestamp as a lean read returns it: a Date whose ISO 8601 text was written from PostgreSQL's
 * own text when the row was read, so printing it (the DateTimeISO scalar, JSON.stringify) is a
 * field read instead of `toISOString()`, the costliest step of a date's way from the row to the
 * answer (about 0.4 µs a date, three dates a row; docs/benchmark.md, seventeenth pass). It is a
 * Date in every other way. Should anything change its time after the read, it prints that time, as
 * any Date would.
 */
export class StoredTimestamp extends Date {
  private readonly readAs: number;

  constructor(
    time: number,
    private readonly iso: string,
  ) {
    super(time);
    this.readAs = time;
  }

  override toISOString(): string {
    return this.getTime() === this.readAs ? this.iso : super.toISOString();
  }
}

/** Zeros that make a fraction of 0–3 digits milliseconds, by the text's length (22, 24–26). */
const PADDING: Record<number, string> = { 22: '.000', 24: '00', 25: '0', 26: '' };

/**
 * A timestamptz column's value as a Date. PostgreSQL prints it as `2026-11-22 03:18:04.361+00` in
 * the service's sessions (UTC; the fraction's trailing zeros left out, and the fraction when it is
 * zero). That text, for years 1000–9999, becomes a StoredTimestamp, its fields read by position
 * (half the time of Date's own parser). Any other text (another zone, more than millisecond
 * precision, another year, an infinite value) is an ordinary Date of it.
 */
export function timestampOf(text: string): Date {
  const n = text.length;
  const padding = PADDING[n];
  if (
    padding === undefined ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58 ||
    (n > 22 && text.charCodeAt(19) !== 46) || // .
    text.charCodeAt(n - 3) !== 43 || // +
    text.charCodeAt(n - 2) !== 48 || // 0
    text.charCodeAt(n - 1) !== 48 ||
    text.charCodeAt(0) === 48 // a year below 1000, which Date.UTC would not take as it is
  ) {
    return new Date(text);
  }
  const digit = (at: number) => text.charCodeAt(at) - 48;
  const fraction = n === 22 ? 0 : digit(20) * 100 + (n > 24 ? digit(21) * 10 : 0) + (n > 25 ? digit(22) : 0);
  const time = Date.UTC(
    digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3),
    digit(5) * 10 + digit(6) - 1,
    digit(8) * 10 + digit(9),
    digit(11) * 10 + digit(12),
    digit(14) * 10 + digit(15),
    digit(17) * 10 + digit(18),
    fraction,
  );
  return new StoredTimestamp(time, `${text.slice(0, 10)}T${text.slice(11, n - 3)}${padding}Z`);
}

/** A Date column's value as a lean row holds it: PostgreSQL's text through timestampOf, a Date as it is, a number as its time. */
export function dateOf(value: unknown): Date {
  return typeof value === 'string' ? timestampOf(value) : value instanceof Date ? value : new Date(value as number);
}
