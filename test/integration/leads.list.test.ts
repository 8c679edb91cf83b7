import { HttpResponse, startTestApp, TestApp } from '../helpers/app';

/**
 * GET /v1/leads (CONTRACT §4): the list envelope, keyset pagination over every sort, paging while
 * rows are inserted or deleted, and every lead filter. Expected results are computed here, from the
 * rows the test inserted, never asked of the API.
 */

interface Lead {
  id: string;
  object: string;
  created_at: string;
  updated_at: string;
  livemode: boolean;
  company: string;
  contact_email: string;
  industry: string | null;
  employees: number | null;
  status: string;
  score: number;
  score_label: string;
  metadata: Record<string, string>;
  [field: string]: unknown;
}

interface ListBody {
  object: string;
  data: Lead[];
  has_more: boolean;
  next_cursor: string | null;
}

type SortField = 'created_at' | 'score' | 'company' | 'employees';
type Primary = string | number | null;

const SORTS = ['created_at', '-created_at', 'score', '-score', 'company', '-company', 'employees', '-employees'] as const;
const labelFor = (score: number): string => (score >= 70 ? 'hot' : score >= 40 ? 'warm' : 'cold');

const INDUSTRIES = ['Software', 'software', 'SOFTWARE', 'Healthcare', 'Retail', 'Non-profit', 'Manufacturing', null, 'Software Services', 'Finance'];
const SOURCES = ['referral', 'partner', 'inbound', 'purchased_list', null, 'event'];
const STATUSES = ['new', 'new', 'contacted', 'qualified', 'disqualified'];

/** Lead i of the main data set: duplicate companies, scores and employee counts, some null employees. */
function leadSpec(i: number): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    // Letters + fixed-width digits, one case: the same order under any PostgreSQL collation.
    company: `Company${String(i % 83).padStart(3, '0')}`,
    contact_email: `Lead${String(i).padStart(3, '0')}@${i % 4 === 0 ? 'gmail.com' : `firm${i % 11}.test`}`,
    status: STATUSES[i % STATUSES.length],
  };
  const industry = INDUSTRIES[i % INDUSTRIES.length];
  if (industry !== null) spec.industry = industry;
  if (i % 9 !== 0) spec.employees = ((i * 53) % 41) * 97;
  const source = SOURCES[i % SOURCES.length];
  if (source !== null) spec.source = source;
  if (i % 3 === 0) spec.contact_name = `Person ${i}`;
  return spec;
}

function compare(a: Primary, b: Primary): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The order a sort must produce, by its field only (ties may come in any stable order); nulls last both ways. */
function expectedPrimaries(rows: Lead[], sort: string): Primary[] {
  const descending = sort.startsWith('-');
  const field = (descending ? sort.slice(1) : sort) as SortField;
  const values = rows.map((row) => row[field] as Primary);
  const present = values.filter((v) => v !== null).sort(compare);
  if (descending) present.reverse();
  return [...present, ...values.filter((v) => v === null)];
}

const fieldOf = (sort: string): SortField => (sort.startsWith('-') ? sort.slice(1) : sort) as SortField;

describe('GET /v1/leads', () => {
  let app: TestApp;
  let key: string;
  let leads: Lead[];
  let byId: Map<string, Lead>;

  async function createMany(apiKey: string, specs: Array<Record<string, unknown>>, batch = 25): Promise<Lead[]> {
    const created: Lead[] = [];
    for (let start = 0; start < specs.length; start += batch) {
      const responses = await Promise.all(specs.slice(start, start + batch).map((body) => app.request<Lead>('POST', '/v1/leads', { key: apiKey, body })));
      for (const res of responses) {
        if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
        created.push(res.body);
      }
    }
    return created;
  }

  function list(apiKey: string, params: Record<string, string | number> = {}): Promise<HttpResponse<ListBody>> {
    const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return app.request<ListBody>('GET', `/v1/leads${qs ? `?${qs}` : ''}`, { key: apiKey });
  }

  /** Checks one page's envelope against CONTRACT §4. */
  function expectPage(res: HttpResponse<ListBody>, limit: number): void {
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
    const body = res.body;
    expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
    expect(body.object).toBe('list');
    expect(Array.isArray(body.data)).toBe(true);
    expect(body.data.length).toBeLessThanOrEqual(limit);
    if (body.has_more) {
      expect(body.data.length).toBe(limit);
      expect(typeof body.next_cursor).toBe('string');
      expect(body.next_cursor!.length).toBeGreaterThan(0);
    } else {
      expect(body.next_cursor).toBeNull();
    }
    expect(res.headers.get('x-request-id')).toBeTruthy();
  }

  /** Follows next_cursor to the end; `between` runs after each page (to change data while paging). */
  async function walk(
    apiKey: string,
    params: Record<string, string | number>,
    limit: number,
    between?: (page: number, body: ListBody) => Promise<void>,
  ): Promise<{ rows: Lead[]; pages: number }> {
    const rows: Lead[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(apiKey, { ...params, limit, ...(cursor ? { cursor } : {}) });
      expectPage(res, limit);
      rows.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages += 1;
      if (pages > 1000) throw new Error('pagination does not end');
      if (cursor && between) await between(pages, res.body);
    } while (cursor);
    return { rows, pages };
  }

  const ids = (rows: Lead[]) => rows.map((r) => r.id);
  const sortedIds = (rows: Lead[]) => ids(rows).sort();

  beforeAll(async () => {
    app = await startTestApp();
    await app.reset();
    ({ testKey: key } = await app.createAccount());
    leads = await createMany(
      key,
      Array.from({ length: 250 }, (_, i) => leadSpec(i)),
    );
    byId = new Map(leads.map((lead) => [lead.id, lead]));
    // The data set must exercise what the tests claim to test.
    expect(new Set(leads.map((l) => l.score_label))).toEqual(new Set(['hot', 'warm', 'cold']));
    expect(leads.filter((l) => l.employees === null).length).toBeGreaterThan(10);
    expect(new Set(leads.map((l) => l.created_at)).size).toBeGreaterThan(5);
  });
  afterAll(() => app.close());

  describe('envelope and pagination', () => {
    it('defaults to 20 rows, newest first, in the list envelope', async () => {
      const res = await list(key);
      expectPage(res, 20);
      expect(res.body.data).toHaveLength(20);
      expect(res.body.has_more).toBe(true);
      expect(res.body.data.map((r) => r.created_at)).toEqual(expectedPrimaries(leads, '-created_at').slice(0, 20));
      // Rows are full lead objects, as GET /v1/leads/{id} returns them.
      for (const row of res.body.data) expect(row).toEqual(byId.get(row.id));
    });

    it('ends with has_more false and next_cursor null, without an empty extra page', async () => {
      const { rows, pages } = await walk(key, {}, 50);
      expect(pages).toBe(5);
      expect(rows).toHaveLength(250);
      const hundred = await walk(key, {}, 100);
      expect(hundred.pages).toBe(3);
      const all = await list(key, { limit: 100 });
      expect(all.body.data).toHaveLength(100);
      // A page bigger than the data is the last page at once.
      const other = await app.createAccount();
      await createMany(other.testKey, [{ company: 'Only', contact_email: 'only@one.test' }]);
      const single = await list(other.testKey, { limit: 100 });
      expectPage(single, 100);
      expect(single.body).toMatchObject({ has_more: false, next_cursor: null });
      expect(single.body.data).toHaveLength(1);
      // No leads at all.
      const empty = await list((await app.createAccount()).testKey);
      expectPage(empty, 20);
      expect(empty.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    });

    it('accepts limit 1 and limit 100 (the bounds)', async () => {
      const one = await list(key, { limit: 1 });
      expectPage(one, 1);
      expect(one.body.data).toHaveLength(1);
      expect(one.body.has_more).toBe(true);
      const max = await list(key, { limit: 100 });
      expect(max.body.data).toHaveLength(100);
    });

    it.each(SORTS)('sort=%s visits every row exactly once, in order, with limit 100 and with limit 7', async (sort) => {
      const [big, small] = await Promise.all([walk(key, { sort }, 100), walk(key, { sort }, 7)]);
      expect(big.pages).toBe(3);
      expect(small.pages).toBe(Math.ceil(250 / 7));
      for (const { rows } of [big, small]) {
        expect(rows).toHaveLength(250);
        expect(new Set(ids(rows)).size).toBe(250);
        expect(sortedIds(rows)).toEqual(sortedIds(leads));
        expect(rows.map((r) => r[fieldOf(sort)] as Primary)).toEqual(expectedPrimaries(leads, sort));
      }
      // Ties are broken the same way whatever the page size: one total order.
      expect(ids(small.rows)).toEqual(ids(big.rows));
      for (const row of small.rows) expect(row).toEqual(byId.get(row.id));
    });

    it('puts leads without employees last in both directions', async () => {
      for (const sort of ['employees', '-employees']) {
        const { rows } = await walk(key, { sort }, 100);
        const firstNull = rows.findIndex((r) => r.employees === null);
        expect(firstNull).toBe(leads.filter((l) => l.employees !== null).length);
        expect(rows.slice(firstNull).every((r) => r.employees === null)).toBe(true);
      }
    });

    it('answers the same page for the same cursor (cursors are stateless)', async () => {
      const first = await list(key, { sort: 'score', limit: 10 });
      const cursor = first.body.next_cursor!;
      const a = await list(key, { sort: 'score', limit: 10, cursor });
      const b = await list(key, { sort: 'score', limit: 10, cursor });
      expect(a.body).toEqual(b.body);
      expect(ids(a.body.data).some((id) => ids(first.body.data).includes(id))).toBe(false);
    });

    it('is 400 param cursor when a cursor is used with a different sort', async () => {
      const cases: Array<[string | undefined, string | undefined]> = [
        ['score', '-score'],
        ['score', undefined],
        [undefined, 'created_at'],
        ['company', 'employees'],
        ['-employees', 'employees'],
      ];
      for (const [from, to] of cases) {
        const page = await list(key, { limit: 5, ...(from ? { sort: from } : {}) });
        const res = await list(key, { limit: 5, cursor: page.body.next_cursor!, ...(to ? { sort: to } : {}) });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'parameter_invalid', param: 'cursor' } });
        expect((res.body as unknown as { error: { request_id: string } }).error.request_id).toBe(res.headers.get('x-request-id'));
      }
    });
  });

  describe('paging while data changes', () => {
    it('rows inserted while paging (newest first) cause no duplicates and no skips', async () => {
      const account = await app.createAccount();
      const existing = await createMany(
        account.testKey,
        Array.from({ length: 60 }, (_, i) => ({ company: `Existing${String(i).padStart(2, '0')}`, contact_email: `e${i}@paging.test` })),
        10,
      );
      const inserted: Lead[] = [];
      let n = 0;
      const { rows } = await walk(account.testKey, {}, 10, async () => {
        inserted.push(
          ...(await createMany(
            account.testKey,
            Array.from({ length: 3 }, () => ({ company: `Inserted${n}`, contact_email: `i${n++}@paging.test` })),
          )),
        );
      });
      expect(inserted.length).toBeGreaterThan(0);
      expect(new Set(ids(rows)).size).toBe(rows.length);
      expect(sortedIds(rows.filter((r) => !r.company.startsWith('Inserted')))).toEqual(sortedIds(existing));
      // Newer rows sort before the cursor, so a newest-first walk never reaches them.
      expect(rows.filter((r) => r.company.startsWith('Inserted'))).toEqual([]);
      expect(rows.map((r) => r.created_at)).toEqual(expectedPrimaries(existing, '-created_at'));
    });

    it('rows inserted while paging by other sorts cause no duplicates and no skips of existing rows', async () => {
      const account = await app.createAccount();
      const existing = await createMany(
        account.testKey,
        Array.from({ length: 50 }, (_, i) => leadSpec(i * 7 + 1)),
        10,
      );
      let n = 0;
      for (const sort of ['created_at', 'score', '-company', 'employees']) {
        const { rows } = await walk(account.testKey, { sort }, 8, async () => {
          await createMany(account.testKey, [
            { ...leadSpec(n), contact_email: `during${n}-${sort}@paging.test` },
            { ...leadSpec(n + 1), contact_email: `during${n + 1}-${sort}@paging.test` },
          ]);
          n += 2;
        });
        expect(new Set(ids(rows)).size).toBe(rows.length);
        const existingIds = new Set(ids(existing));
        expect(
          rows
            .filter((r) => existingIds.has(r.id))
            .map((r) => r.id)
            .sort(),
        ).toEqual(sortedIds(existing));
        // Whatever was visited is in order.
        const visited = rows.map((r) => r[fieldOf(sort)] as Primary);
        expect(visited).toEqual(expectedPrimaries(rows, sort));
      }
    });

    it('a deleted cursor row does not break the next page', async () => {
      const account = await app.createAccount();
      const existing = await createMany(
        account.testKey,
        Array.from({ length: 30 }, (_, i) => leadSpec(i)).map((spec, i) => ({ ...spec, contact_email: `d${i}@paging.test` })),
        10,
      );
      const deleted: string[] = [];
      const { rows } = await walk(account.testKey, { sort: 'score' }, 10, async (_page, body) => {
        // Delete the very row the next_cursor points after.
        const last = body.data[body.data.length - 1];
        const res = await app.request('DELETE', `/v1/leads/${last.id}`, { key: account.testKey });
        expect(res.status).toBe(200);
        deleted.push(last.id);
      });
      const remaining = existing.filter((l) => !deleted.includes(l.id));
      expect(new Set(ids(rows)).size).toBe(rows.length);
      // Every row that was not deleted was visited; a deleted row was visited only before its deletion.
      for (const lead of remaining) expect(ids(rows)).toContain(lead.id);
      expect(rows.map((r) => r.score)).toEqual(expectedPrimaries(rows, 'score'));
    });
  });

  describe('filters', () => {
    /** Every row matching `params`, by walking all pages, checked against the predicate over the inserted rows. */
    async function expectFilter(params: Record<string, string | number>, predicate: (lead: Lead) => boolean, options: { allowEmpty?: boolean } = {}) {
      const expected = leads.filter(predicate);
      if (!options.allowEmpty) expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(leads.length);
      const { rows } = await walk(key, params, 100);
      expect({ params, ids: sortedIds(rows) }).toEqual({ params, ids: sortedIds(expected) });
      expect(new Set(ids(rows)).size).toBe(rows.length);
      const sort = typeof params.sort === 'string' ? params.sort : '-created_at';
      expect(rows.map((r) => r[fieldOf(sort)] as Primary)).toEqual(expectedPrimaries(expected, sort));
      return rows;
    }

    it('industry: exact and case-insensitive', async () => {
      const software = (l: Lead) => l.industry?.toLowerCase() === 'software';
      expect(leads.some((l) => l.industry === 'Software Services')).toBe(true);
      for (const value of ['software', 'Software', 'SOFTWARE', 'sOfTwArE']) await expectFilter({ industry: value }, software);
      await expectFilter({ industry: 'software services' }, (l) => l.industry === 'Software Services');
      await expectFilter({ industry: 'Non-profit' }, (l) => l.industry === 'Non-profit');
      // Not a substring match and not a pattern.
      for (const value of ['soft', 'soft%', 'softwar_', 'Software%', '%']) {
        const res = await list(key, { industry: value });
        expectPage(res, 20);
        expect({ value, data: res.body.data }).toEqual({ value, data: [] });
      }
    });

    it('status', async () => {
      for (const status of ['new', 'contacted', 'qualified', 'disqualified']) {
        await expectFilter({ status }, (l) => l.status === status);
      }
      const converted = await list(key, { status: 'converted' });
      expect(converted.status).toBe(200);
      expect(converted.body.data).toEqual([]);
    });

    it('score_label (computed from the score: hot ≥ 70, warm 40–69, cold < 40)', async () => {
      for (const label of ['hot', 'warm', 'cold']) {
        await expectFilter({ score_label: label }, (l) => labelFor(l.score) === label);
      }
    });

    it('min_score and max_score, inclusive', async () => {
      const scores = [...new Set(leads.map((l) => l.score))].sort((a, b) => a - b);
      const mid = scores[Math.floor(scores.length / 2)];
      await expectFilter({ min_score: mid }, (l) => l.score >= mid);
      await expectFilter({ max_score: mid }, (l) => l.score <= mid);
      await expectFilter({ min_score: mid, max_score: mid }, (l) => l.score === mid);
      await expectFilter({ min_score: 40, max_score: 69 }, (l) => l.score >= 40 && l.score <= 69);
      await expectFilter({ min_score: 70 }, (l) => l.score >= 70);
      const none = await list(key, { min_score: 80, max_score: 20 });
      expect(none.body.data).toEqual([]);
    });

    it('min_employees and max_employees, inclusive, leaving out leads without employees', async () => {
      await expectFilter({ min_employees: 0 }, (l) => l.employees !== null);
      await expectFilter({ min_employees: 1940 }, (l) => l.employees !== null && l.employees >= 1940);
      await expectFilter({ max_employees: 970 }, (l) => l.employees !== null && l.employees <= 970);
      await expectFilter({ min_employees: 970, max_employees: 1940 }, (l) => l.employees !== null && l.employees >= 970 && l.employees <= 1940);
      await expectFilter({ min_employees: 0, max_employees: 0 }, (l) => l.employees === 0);
    });

    it('created_after (at or after) and created_before (strictly before)', async () => {
      const times = [...new Set(leads.map((l) => l.created_at))].sort();
      const t1 = times[Math.floor(times.length * 0.3)];
      const t2 = times[Math.floor(times.length * 0.7)];
      await expectFilter({ created_after: t1 }, (l) => l.created_at >= t1);
      await expectFilter({ created_before: t2 }, (l) => l.created_at < t2);
      await expectFilter({ created_after: t1, created_before: t2 }, (l) => l.created_at >= t1 && l.created_at < t2);
      // The same instant written with an offset.
      const shifted = new Date(Date.parse(t1) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
      await expectFilter({ created_after: shifted }, (l) => l.created_at >= t1);
      const future = await list(key, { created_after: '2999-01-01T00:00:00.000Z' });
      expect(future.body.data).toEqual([]);
      const all = await walk(key, { created_before: '2999-01-01T00:00:00.000Z' }, 100);
      expect(all.rows).toHaveLength(250);
    });

    it('q: case-insensitive match on company or contact email', async () => {
      const q = (text: string) => (l: Lead) => l.company.toLowerCase().includes(text.toLowerCase()) || l.contact_email.includes(text.toLowerCase());
      for (const text of ['company01', 'COMPANY01', 'firm3.test', 'FIRM3', 'GMAIL.COM', 'lead00', 'LEAD1', '@firm1', 'pany08']) {
        await expectFilter({ q: text }, q(text));
      }
      const none = await list(key, { q: 'no-such-lead-anywhere' });
      expect(none.body.data).toEqual([]);
    });

    it('filters combine (every filter must match)', async () => {
      await expectFilter({ industry: 'software', status: 'new' }, (l) => l.industry?.toLowerCase() === 'software' && l.status === 'new');
      await expectFilter(
        { score_label: 'warm', min_employees: 97, q: 'firm' },
        (l) => labelFor(l.score) === 'warm' && l.employees !== null && l.employees >= 97 && l.contact_email.includes('firm'),
      );
      const times = [...new Set(leads.map((l) => l.created_at))].sort();
      const t = times[Math.floor(times.length / 2)];
      await expectFilter(
        { status: 'qualified', created_after: t, max_score: 80, sort: 'score' },
        (l) => l.status === 'qualified' && l.created_at >= t && l.score <= 80,
      );
      await expectFilter(
        { industry: 'healthcare', min_score: 0, max_employees: 3000, sort: '-employees' },
        (l) => l.industry === 'Healthcare' && l.employees !== null && l.employees <= 3000,
      );
    });

    it('filters with pagination: small pages over a filtered set, in every sort', async () => {
      const predicate = (l: Lead) => l.status === 'new' && l.score >= 30;
      const expected = leads.filter(predicate);
      expect(expected.length).toBeGreaterThan(12);
      const walks = await Promise.all(SORTS.map((sort) => walk(key, { status: 'new', min_score: 30, sort }, 4)));
      for (const [i, sort] of SORTS.entries()) {
        const { rows, pages } = walks[i];
        expect(pages).toBe(Math.ceil(expected.length / 4));
        expect(sortedIds(rows)).toEqual(sortedIds(expected));
        expect(new Set(ids(rows)).size).toBe(rows.length);
        expect(rows.map((r) => r[fieldOf(sort)] as Primary)).toEqual(expectedPrimaries(expected, sort));
      }
      // A filtered walk with nulls straddling pages.
      const withNulls = leads.filter((l) => l.industry?.toLowerCase() === 'software');
      expect(withNulls.some((l) => l.employees === null)).toBe(true);
      const { rows } = await walk(key, { industry: 'software', sort: '-employees' }, 3);
      expect(sortedIds(rows)).toEqual(sortedIds(withNulls));
      expect(rows.map((r) => r.employees)).toEqual(expectedPrimaries(withNulls, '-employees'));
    });

    it('q and industry treat % and _ literally, not as wildcards', async () => {
      const account = await app.createAccount();
      const specs = [
        { company: '100% Natural', contact_email: 'sales@natural.test', industry: '50%_off' },
        { company: '100 Percent', contact_email: 'hundred@percent.test', industry: '50%xoff' },
        { company: 'Under_score Ltd', contact_email: 'info@underscore.test', industry: '50% off' },
        { company: 'Underscore Inc', contact_email: 'hello@under-score.test' },
        { company: 'UNDERXSCORE', contact_email: 'ux@plain.test' },
        { company: 'Plain Co', contact_email: 'first_last@plain.test' },
        { company: 'Back\\slash Co', contact_email: 'back@slash.test' },
        { company: 'Mixed Case GmbH', contact_email: 'MiXeD@Case.test' },
      ];
      const rows = await createMany(account.testKey, specs);
      const companyOf = new Map(rows.map((r) => [r.id, r.company]));
      const search = async (params: Record<string, string>) => {
        const { rows: found } = await walk(account.testKey, params, 100);
        return found.map((r) => companyOf.get(r.id)).sort();
      };
      const expectQ = (text: string) =>
        rows
          .filter((r) => r.company.toLowerCase().includes(text.toLowerCase()) || r.contact_email.includes(text.toLowerCase()))
          .map((r) => r.company)
          .sort();
      const cases: Array<[string, string[]]> = [
        ['%', ['100% Natural']],
        ['100%', ['100% Natural']],
        ['_', ['Plain Co', 'Under_score Ltd']],
        ['under_', ['Under_score Ltd']],
        ['UNDER_SCORE', ['Under_score Ltd']],
        ['r_s', ['Under_score Ltd']],
        ['Under%', []],
        ['%natural%', []],
        ['\\', ['Back\\slash Co']],
        ['mixed case', ['Mixed Case GmbH']],
        ['mixed@case', ['Mixed Case GmbH']],
        ['underscore', ['Underscore Inc', 'Under_score Ltd']],
        ['natural.test', ['100% Natural']],
      ];
      for (const [text, expected] of cases) {
        // The expectation written by hand agrees with the literal-match predicate.
        expect({ text, companies: expectQ(text) }).toEqual({ text, companies: [...expected].sort() });
        expect({ text, companies: await search({ q: text }) }).toEqual({ text, companies: [...expected].sort() });
      }
      expect(await search({ industry: '50%_off' })).toEqual(['100% Natural']);
      expect(await search({ industry: '50%_OFF' })).toEqual(['100% Natural']);
      expect(await search({ industry: '50%' })).toEqual([]);
      expect(await search({ industry: '50_ off' })).toEqual([]);
      expect(await search({ industry: '50% off' })).toEqual(['Under_score Ltd']);
    });

    it('a bad filter value is 400 naming the parameter, an unknown one 400 parameter_unknown', async () => {
      const cases: Array<[Record<string, string>, string, string]> = [
        [{ industry: 'x'.repeat(101) }, 'parameter_invalid', 'industry'],
        [{ status: 'won' }, 'parameter_invalid', 'status'],
        [{ score_label: 'HOT' }, 'parameter_invalid', 'score_label'],
        [{ min_score: '-1' }, 'parameter_invalid', 'min_score'],
        [{ max_score: '101' }, 'parameter_invalid', 'max_score'],
        [{ min_employees: 'many' }, 'parameter_invalid', 'min_employees'],
        [{ max_employees: '-3' }, 'parameter_invalid', 'max_employees'],
        [{ created_after: 'yesterday' }, 'parameter_invalid', 'created_after'],
        [{ created_before: '2026-02-30T00:00:00Z' }, 'parameter_invalid', 'created_before'],
        [{ q: '' }, 'parameter_invalid', 'q'],
        [{ q: 'x'.repeat(201) }, 'parameter_invalid', 'q'],
        [{ stage: 'proposal' }, 'parameter_unknown', 'stage'],
        [{ scoreLabel: 'hot' }, 'parameter_unknown', 'scoreLabel'],
      ];
      for (const [params, code, param] of cases) {
        const res = await list(key, params);
        expect({ params, status: res.status }).toEqual({ params, status: 400 });
        expect(res.body).toMatchObject({ error: { type: 'invalid_request_error', code, param } });
        expect((res.body as unknown as { error: { request_id: string } }).error.request_id).toBe(res.headers.get('x-request-id'));
      }
    });

    it("never shows another account's or the other mode's leads", async () => {
      const account = await app.createAccount();
      const mine = await createMany(account.testKey, [{ company: 'Company001', contact_email: 'lead001@firm1.test', industry: 'Software' }]);
      const live = await createMany(account.liveKey, [{ company: 'Company001', contact_email: 'live@firm1.test', industry: 'Software' }]);
      const { rows } = await walk(account.testKey, { industry: 'software' }, 100);
      expect(ids(rows)).toEqual(ids(mine));
      const liveRows = await walk(account.liveKey, { q: 'company001' }, 100);
      expect(ids(liveRows.rows)).toEqual(ids(live));
      // The big data set's account still sees only its own.
      const { rows: main } = await walk(key, { q: 'company001' }, 100);
      expect(main.every((r) => byId.has(r.id))).toBe(true);
    });
  });
});
