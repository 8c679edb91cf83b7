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
    text: string,
    private readonly iso: string,
  ) {
    super(text);
    this.readAs = this.getTime();
  }

  override toISOString(): string {
    return this.getTime() === this.readAs ? this.iso : super.toISOString();
  }
}

/** Zeros that make a fraction of 1–3 digits milliseconds, by the text's length (24–26). */
const PADDING = ['00', '0', ''];

/**
 * A timestamptz column's value as a Date. PostgreSQL prints it as `2026-11-22 03:18:04.361+00` in
 * the service's sessions (UTC; trailing zeros of the fraction left out, and the fraction when it
 * is zero); that text becomes a StoredTimestamp. Any other text (another zone, more than
 * millisecond precision, a year beyond 9999, an infinite value) is an ordinary Date of it.
 */
export function timestampOf(text: string): Date {
  const n = text.length;
  if (
    n >= 22 &&
    n <= 26 &&
    text.charCodeAt(4) === 45 && // -
    text.charCodeAt(10) === 32 && // space
    text.charCodeAt(n - 3) === 43 && // +
    text.charCodeAt(n - 2) === 48 && // 0
    text.charCodeAt(n - 1) === 48 // 0
  ) {
    if (n === 22) return new StoredTimestamp(text, `${text.slice(0, 10)}T${text.slice(11, 19)}.000Z`);
    if (n >= 24 && text.charCodeAt(19) === 46) return new StoredTimestamp(text, `${text.slice(0, 10)}T${text.slice(11, n - 3)}${PADDING[n - 24]}Z`);
  }
  return new Date(text);
}
