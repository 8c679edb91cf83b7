import { QueryOrder } from '@mikro-orm/core';
import { ApiError } from '../../src/common/api-error';
import { afterCursor, orderByFor, parseSort, SortableField, toPage } from '../../src/common/pagination';

const FIELDS: Record<string, SortableField> = {
  created_at: { property: 'createdAt', kind: 'date' },
  score: { property: 'score', kind: 'number' },
  company: { property: 'company', kind: 'string' },
  employees: { property: 'employees', kind: 'number', nullable: true },
};

const sortOf = (value?: string) => parseSort(value, FIELDS, '-created_at');
const cursorOf = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');

function apiError(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

interface Row {
  id: string;
  createdAt: Date;
  score: number;
  company: string;
  employees: number | null;
}

const rows = (count: number): Row[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `lead_${String(i).padStart(26, '0')}`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
    score: 10 + i,
    company: `Company ${i}`,
    employees: i % 2 ? null : i * 10,
  }));

describe('parseSort', () => {
  it('uses the fallback when no sort is given', () => {
    expect(sortOf(undefined)).toEqual({ key: '-created_at', field: FIELDS.created_at, descending: true });
    expect(parseSort(null, FIELDS, 'score')).toEqual({ key: 'score', field: FIELDS.score, descending: false });
  });

  it('reads a field name with an optional - for descending', () => {
    expect(sortOf('score')).toMatchObject({ key: 'score', descending: false, field: FIELDS.score });
    expect(sortOf('-employees')).toMatchObject({ key: '-employees', descending: true, field: FIELDS.employees });
    expect(sortOf('  company ')).toMatchObject({ key: 'company', descending: false });
  });

  it('accepts the camelCase spelling GraphQL clients use and normalises it to snake_case', () => {
    expect(sortOf('-createdAt')).toMatchObject({ key: '-created_at', descending: true, field: FIELDS.created_at });
  });

  it('refuses unknown fields with 400 parameter_invalid naming sort', () => {
    for (const bad of ['name', '--score', '+score', 'score desc', '', 'id']) {
      const error = apiError(() => sortOf(bad));
      expect(error.errorCode).toBe('parameter_invalid');
      expect(error.param).toBe('sort');
      expect(error.status).toBe(400);
      expect(error.message).toContain('created_at, score, company, employees');
    }
  });
});

describe('orderByFor', () => {
  it('orders by the field then id in the same direction, nulls last for nullable fields', () => {
    expect(orderByFor(sortOf('-created_at'))).toEqual([{ createdAt: QueryOrder.DESC }, { id: QueryOrder.DESC }]);
    expect(orderByFor(sortOf('score'))).toEqual([{ score: QueryOrder.ASC }, { id: QueryOrder.ASC }]);
    expect(orderByFor(sortOf('-employees'))).toEqual([{ employees: QueryOrder.DESC_NULLS_LAST }, { id: QueryOrder.DESC }]);
    expect(orderByFor(sortOf('employees'))).toEqual([{ employees: QueryOrder.ASC_NULLS_LAST }, { id: QueryOrder.ASC }]);
  });
});

describe('toPage', () => {
  it('returns the first `limit` rows and a cursor when one more row was fetched', () => {
    const fetched = rows(4);
    const page = toPage(fetched, 3, sortOf('score'));
    expect(page.data).toEqual(fetched.slice(0, 3));
    expect(page.hasMore).toBe(true);
    expect(typeof page.nextCursor).toBe('string');
    expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/); // base64url: safe in a query string as is
  });

  it('has no cursor on the last page', () => {
    expect(toPage(rows(3), 3, sortOf('score'))).toEqual({ data: rows(3), hasMore: false, nextCursor: null });
    expect(toPage([], 20, sortOf())).toEqual({ data: [], hasMore: false, nextCursor: null });
  });

  it('round-trips a date cursor into the keyset condition after the last row (descending)', () => {
    const fetched = rows(3);
    const sort = sortOf('-created_at');
    const { nextCursor, data } = toPage(fetched, 2, sort);
    const last = data[1];
    // The bound in front makes the index scan start at the cursor; the $or is the exact condition.
    expect(afterCursor(sort, nextCursor)).toEqual({
      $and: [{ createdAt: { $lte: last.createdAt } }, { $or: [{ createdAt: { $lt: last.createdAt } }, { createdAt: last.createdAt, id: { $lt: last.id } }] }],
    });
    const condition = afterCursor(sort, nextCursor) as { $and: [unknown, { $or: Array<{ createdAt: unknown }> }] };
    expect(condition.$and[1].$or[1].createdAt).toBeInstanceOf(Date);
  });

  it('round-trips number and string cursors (ascending uses $gt)', () => {
    const fetched = rows(3);
    const byScore = sortOf('score');
    expect(afterCursor(byScore, toPage(fetched, 1, byScore).nextCursor)).toEqual({
      $and: [{ score: { $gte: 10 } }, { $or: [{ score: { $gt: 10 } }, { score: 10, id: { $gt: fetched[0].id } }] }],
    });
    const byCompany = sortOf('-company');
    expect(afterCursor(byCompany, toPage(fetched, 1, byCompany).nextCursor)).toEqual({
      $and: [{ company: { $lte: 'Company 0' } }, { $or: [{ company: { $lt: 'Company 0' } }, { company: 'Company 0', id: { $lt: fetched[0].id } }] }],
    });
  });

  it('round-trips nullable fields: rows with null come after every value, then by id', () => {
    const fetched = rows(3); // employees: 0, null, 20
    const sort = sortOf('-employees');
    expect(afterCursor(sort, toPage(fetched, 1, sort).nextCursor)).toEqual({
      $or: [{ $and: [{ employees: { $lte: 0 } }, { $or: [{ employees: { $lt: 0 } }, { employees: 0, id: { $lt: fetched[0].id } }] }] }, { employees: null }],
    });
    const fromNull = toPage([fetched[1], fetched[2]], 1, sort).nextCursor;
    expect(afterCursor(sort, fromNull)).toEqual({ employees: null, id: { $lt: fetched[1].id } });
  });
});

describe('afterCursor', () => {
  it('is no condition without a cursor', () => {
    expect(afterCursor(sortOf(), undefined)).toBeUndefined();
    expect(afterCursor(sortOf(), null)).toBeUndefined();
    expect(afterCursor(sortOf(), '')).toBeUndefined();
  });

  const expectBadCursor = (sort: ReturnType<typeof sortOf>, cursor: string) => {
    const error = apiError(() => afterCursor(sort, cursor));
    expect(error.errorCode).toBe('parameter_invalid');
    expect(error.param).toBe('cursor');
    expect(error.status).toBe(400);
  };

  it('refuses garbage with 400 parameter_invalid naming cursor', () => {
    for (const garbage of [
      'not a cursor',
      '%%%',
      'abc',
      Buffer.from('{"s":').toString('base64url'),
      cursorOf(null),
      cursorOf(42),
      cursorOf('text'),
      cursorOf([1, 2]),
      cursorOf({}),
      cursorOf({ s: '-created_at', v: '2026-01-01T00:00:00.000Z' }),
      cursorOf({ s: '-created_at', i: 'lead_x' }),
      cursorOf({ s: '-created_at', v: '2026-01-01T00:00:00.000Z', i: 7 }),
    ]) {
      expectBadCursor(sortOf(), garbage);
    }
  });

  it('refuses a cursor made for another sort', () => {
    const sort = sortOf('-created_at');
    const cursor = toPage(rows(2), 1, sort).nextCursor as string;
    const error = apiError(() => afterCursor(sortOf('created_at'), cursor));
    expect(error.param).toBe('cursor');
    expect(error.message).toContain('sort=-created_at');
    expectBadCursor(sortOf('score'), cursor);
  });

  it('refuses a value of the wrong type for the sort field', () => {
    expectBadCursor(sortOf('-created_at'), cursorOf({ s: '-created_at', v: 12345, i: 'lead_x' }));
    expectBadCursor(sortOf('-created_at'), cursorOf({ s: '-created_at', v: 'yesterday', i: 'lead_x' }));
    expectBadCursor(sortOf('-created_at'), cursorOf({ s: '-created_at', v: null, i: 'lead_x' }));
    expectBadCursor(sortOf('score'), cursorOf({ s: 'score', v: '10', i: 'lead_x' }));
    expectBadCursor(sortOf('score'), cursorOf({ s: 'score', v: null, i: 'lead_x' }));
    expectBadCursor(sortOf('company'), cursorOf({ s: 'company', v: 10, i: 'lead_x' }));
    expectBadCursor(sortOf('company'), cursorOf({ s: 'company', v: { $ne: null }, i: 'lead_x' }));
    expectBadCursor(sortOf('employees'), cursorOf({ s: 'employees', v: '10', i: 'lead_x' }));
  });

  it('never lets a cursor smuggle an operator object into the query', () => {
    expectBadCursor(sortOf('score'), cursorOf({ s: 'score', v: { $gt: 0 }, i: 'lead_x' }));
  });
});
