import { StoredTimestamp, timestampOf } from '../../src/db/stored-timestamp';

/** A time as PostgreSQL prints a timestamptz(3) in a UTC session: the fraction's trailing zeros left out. */
function postgresText(date: Date): string {
  const [day, time] = date.toISOString().slice(0, -1).split('T');
  return `${day} ${time.replace(/\.?0+$/, '')}+00`;
}

describe('timestampOf: a timestamptz column read as a Date that prints as it was read', () => {
  const times = [
    Date.UTC(2026, 10, 22, 3, 18, 4, 361),
    Date.UTC(2026, 10, 22, 3, 18, 4, 360),
    Date.UTC(2026, 10, 22, 3, 18, 4, 300),
    Date.UTC(2026, 10, 22, 3, 18, 4, 0),
    Date.UTC(2026, 10, 22, 0, 0, 0, 0),
    Date.UTC(2026, 10, 22, 3, 18, 10, 5),
    Date.UTC(2026, 10, 22, 3, 18, 10, 50),
    0,
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(1, 0, 1),
    Date.UTC(1000, 0, 1),
    Date.UTC(2024, 1, 29, 12),
  ];
  // And times across the years the fast path reads, at each precision PostgreSQL prints.
  for (let i = 0; i < 2000; i++) {
    const time = Math.floor(Date.UTC(1000, 0, 1) + Math.random() * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1)));
    times.push(i % 4 === 0 ? time - (time % 1000) : i % 4 === 1 ? time - (time % 100) : i % 4 === 2 ? time - (time % 10) : time);
  }

  it('is the same Date as the text parsed, and prints the same ISO 8601 text, for every precision PostgreSQL prints', () => {
    for (const time of times) {
      const text = postgresText(new Date(time));
      const date = timestampOf(text);
      expect(date).toBeInstanceOf(Date);
      expect(date.getTime()).toBe(time);
      expect(date.toISOString()).toBe(new Date(time).toISOString());
      expect(JSON.stringify({ at: date })).toBe(JSON.stringify({ at: new Date(time) }));
    }
    // The fast path is taken for the texts PostgreSQL prints in the service's sessions.
    expect(timestampOf('2026-11-22 03:18:04.361+00')).toBeInstanceOf(StoredTimestamp);
    expect(timestampOf('2026-11-22 03:18:04.36+00')).toBeInstanceOf(StoredTimestamp);
    expect(timestampOf('2026-11-22 03:18:04.3+00')).toBeInstanceOf(StoredTimestamp);
    expect(timestampOf('2026-11-22 03:18:04+00')).toBeInstanceOf(StoredTimestamp);
  });

  it('reads any other text as an ordinary Date of it', () => {
    const others = [
      '0999-11-22 03:18:04.361+00',
      '2026-11-22 04:18:04.361+01',
      '2026-11-22 03:18:04.361234+00',
      '2026-11-22 03:18:04.361+00:30',
      '2026-11-22',
      '2026-11-22T03:18:04.361Z',
    ];
    for (const text of others) {
      const date = timestampOf(text);
      expect(date).not.toBeInstanceOf(StoredTimestamp);
      expect(date.getTime()).toBe(new Date(text).getTime());
    }
    expect(() => timestampOf('infinity').toISOString()).toThrow(RangeError);
  });

  it('prints its new time once something changes it, as any Date would', () => {
    const date = timestampOf('2026-11-22 03:18:04.361+00');
    date.setUTCDate(23);
    expect(date.toISOString()).toBe('2026-11-23T03:18:04.361Z');
    date.setTime(0);
    expect(date.toISOString()).toBe('1970-01-01T00:00:00.000Z');
  });
});
