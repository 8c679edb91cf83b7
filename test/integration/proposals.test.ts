import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { OPERATION_LIMITS } from '../../src/limits/operation-limit';
import { HttpResponse, startTestApp, TestAccount, TestApp } from '../helpers/app';

/**
 * Proposals (CONTRACT §1, §3, §7, §10) through real HTTP, real Apollo and real PostgreSQL:
 * POST /v1/proposals (explicit or derived lines, exact totals, numbering per account and mode,
 * frozen snapshots), GET /v1/proposals/{id}, the PDF route (headers, ETag, text a reader sees,
 * pages, non-Latin text, determinism), the GraphQL surface (a deal's proposals, proposalPdf) and
 * the proposal.created event. Expected figures are computed here, in integers, from the inputs.
 */

const PUBLIC_URL = 'https://api.example.test';
const PDF_TEXT = path.resolve(__dirname, '../helpers/pdf-text.js');
const PROPOSAL_ID = /^prop_[0-9A-HJKMNP-TV-Z]{26}$/;
const NUMBER = /^P-\d{4}-\d{6}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 86_400_000;
const ERROR_KEYS = ['code', 'message', 'param', 'request_id', 'type'];
const PROPOSAL_KEYS = [
  'created_at',
  'currency',
  'customer',
  'deal_id',
  'deal_snapshot',
  'discount',
  'discount_percent',
  'id',
  'lead_snapshot',
  'line_items',
  'livemode',
  'metadata',
  'notes',
  'number',
  'object',
  'pdf_url',
  'status',
  'subtotal',
  'tax',
  'tax_percent',
  'title',
  'total',
  'updated_at',
  'valid_until',
];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface LineItem {
  description: string;
  quantity: number;
  unit_price: number;
  amount: number;
}

interface Proposal {
  id: string;
  object: string;
  number: string;
  deal_id: string;
  title: string;
  status: string;
  currency: string;
  customer: { company: string; contact_name: string | null; contact_email: string | null } | null;
  line_items: LineItem[];
  subtotal: number;
  discount_percent: number;
  discount: number;
  tax_percent: number;
  tax: number;
  total: number;
  valid_until: string;
  notes: string | null;
  metadata: Record<string, string>;
  deal_snapshot: Json;
  lead_snapshot: Json | null;
  pdf_url: string;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

interface PdfResponse {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

interface PdfText {
  text: string;
  total: number;
  pages: string[];
}

let emailCounter = 0;
const uniqueEmail = () => `buyer${++emailCounter}-${Date.now()}@globex.test`;

/** Decimal text → integer units (hundredths for prices, thousandths for quantities), no float multiplication. */
function units(value: number, places: number): bigint {
  const [whole, fraction = ''] = String(value).split('.');
  if (fraction.length > places) throw new Error(`${value} has more than ${places} decimals`);
  return BigInt(whole) * 10n ** BigInt(places) + BigInt(fraction.padEnd(places, '0') || '0');
}

/** n / d rounded half up (n ≥ 0). */
function rounded(n: bigint, d: bigint): bigint {
  return (n % d) * 2n >= d ? n / d + 1n : n / d;
}

/** The expected figures of a proposal, in minor units, from the request's inputs. */
function expectedTotals(lines: Array<{ quantity: number; unit_price: number }>, discountPercent = 0, taxPercent = 0) {
  const amounts = lines.map((l) => rounded(units(l.quantity, 3) * units(l.unit_price, 2), 1000n));
  const subtotal = amounts.reduce((sum, a) => sum + a, 0n);
  const discount = rounded(subtotal * units(discountPercent, 3), 100_000n);
  const tax = rounded((subtotal - discount) * units(taxPercent, 3), 100_000n);
  return { amounts, subtotal, discount, tax, total: subtotal - discount + tax };
}

/** Minor units as the JSON number in major units (exact for these magnitudes: the decimal text of n/100). */
const major = (minor: bigint): number => Number(`${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`);

/** Minor units as the PDF prints them: "USD 1,234.50" (written independently of formatMoney). */
function printed(minor: bigint, currency: string): string {
  const whole = (minor / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency} ${whole}.${String(minor % 100n).padStart(2, '0')}`;
}

const utcDatePlusDays = (iso: string, days: number): string => new Date(Date.parse(iso) + days * DAY_MS).toISOString().slice(0, 10);

/** Runs test/helpers/pdf-text.js (pdf-parse in plain node: jest cannot load pdf.js's worker). */
function pdfText(bytes: Buffer): Promise<PdfText> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [PDF_TEXT], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`pdf-text failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as PdfText);
    });
    child.stdin!.end(bytes);
  });
}

/** The extracted text with every run of whitespace (wrapped lines, cell gaps) as one space. */
const flat = (text: string): string => text.replace(/\s+/g, ' ');

/**
 * The text without any whitespace: a table cell wraps long descriptions after a hyphen
 * ("on-" / "site") and CJK text between any two characters, which extraction shows as breaks.
 */
const dense = (text: string): string => text.replace(/\s+/g, '');

const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** The contract's error shape (§3), its status, code and param. */
function expectError(res: HttpResponse, status: number, code: string, param: string | undefined): void {
  const context = `${status} ${code} ${param ?? ''}: got ${res.status} ${res.text.slice(0, 400)}`;
  expect({ context, status: res.status }).toEqual({ context, status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Record<string, unknown>;
  for (const key of Object.keys(error)) expect(ERROR_KEYS).toContain(key);
  expect(error.type).toBe(status === 429 ? 'rate_limit_error' : 'invalid_request_error');
  expect(error.code).toBe(code);
  expect(typeof error.message).toBe('string');
  expect(error.message).not.toMatch(/\$input|Variable "|ProposalCreateInput|lineItems|graphql|\bat .+\(.*:\d+:\d+\)|select |insert /i);
  if (param === undefined) expect(error).not.toHaveProperty('param');
  else expect(error.param).toBe(param);
  expect(res.headers.get('x-request-id')).toBe(error.request_id);
}

describe('proposals', () => {
  let app: TestApp;
  let main: TestAccount;

  const ok = async <T = Json>(pending: Promise<HttpResponse<T>>, status = 200): Promise<T> => {
    const res = await pending;
    if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text.slice(0, 600)}`);
    return res.body;
  };

  const createLead = (key: string, fields: Json = {}) =>
    ok<Json>(
      app.request('POST', '/v1/leads', { key, body: { company: 'Globex Corporation', contact_name: 'Hank Scorpio', contact_email: uniqueEmail(), ...fields } }),
      201,
    );
  const createDeal = (key: string, fields: Json = {}) =>
    ok<Json>(app.request('POST', '/v1/deals', { key, body: { name: 'Globex rollout', value: 1000, ...fields } }), 201);
  const post = (key: string, body: unknown) => app.request<Proposal>('POST', '/v1/proposals', { key, body });
  const create = (key: string, body: Json) => ok<Proposal>(post(key, body), 201);
  const get = (key: string, id: string) => app.request<Proposal>('GET', `/v1/proposals/${id}`, { key });

  async function getPdf(key: string, id: string, headers: Record<string, string> = {}): Promise<PdfResponse> {
    const res = await fetch(`${app.baseUrl}/v1/proposals/${id}/pdf`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  /**
   * A conditional GET over plain node:http. WHATWG fetch cannot be used for this: on a request
   * with If-None-Match it adds `Cache-Control: no-cache` (fetch spec, HTTP-network-or-cache fetch),
   * which asks the server for a full response.
   */
  function conditionalPdf(key: string, id: string, etag: string): Promise<PdfResponse> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${app.baseUrl}/v1/proposals/${id}/pdf`, { headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          resolve({ status: res.statusCode ?? 0, headers, bytes: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  async function pdfOf(key: string, id: string): Promise<PdfResponse> {
    const res = await getPdf(key, id);
    if (res.status !== 200) throw new Error(`pdf failed: ${res.status} ${res.bytes.toString('utf8').slice(0, 400)}`);
    return res;
  }

  const sequence = (number: string): number => Number(number.slice(-6));

  beforeAll(async () => {
    app = await startTestApp({
      env: { PUBLIC_URL },
      operationLimits: { ...OPERATION_LIMITS, generateProposal: { windowS: 60, max: 1000 }, proposalPdf: { windowS: 60, max: 1000 } },
    });
    main = await app.createAccount({ name: 'Initech Consulting' });
  });
  afterAll(() => app.close());

  describe('POST /v1/proposals', () => {
    it('creates a proposal with explicit lines, discount, tax, notes, metadata and valid_days: exact totals, customer, snapshots, pdf_url', async () => {
      const key = main.testKey;
      const lead = await createLead(key, { company: 'Globex Corporation', contact_name: 'Hank Scorpio' });
      const deal = await createDeal(key, { name: 'Globex rollout', value: 12500.5, currency: 'EUR', lead_id: lead.id });
      const dealBefore = (await ok<Json>(app.request('GET', `/v1/deals?lead_id=${lead.id}`, { key }))).data;
      expect(dealBefore.map((d: Json) => d.id)).toEqual([deal.id]);
      const leadBefore = await ok<Json>(app.request('GET', `/v1/leads/${lead.id}`, { key }));

      const lines = [
        { description: 'Licences', quantity: 3, unit_price: 0.1 },
        { description: 'Onboarding workshop', quantity: 1.5, unit_price: 1234.56 },
        { description: 'Support (12 months)', quantity: 12, unit_price: 99.99 },
        { description: 'Travel', quantity: 0.333, unit_price: 0.01 },
      ];
      const before = Date.now();
      const res = await post(key, {
        deal_id: deal.id,
        title: 'Globex rollout, phase 1',
        line_items: lines,
        discount_percent: 33.333,
        tax_percent: 19,
        notes: 'Prices exclude travel beyond the first visit.',
        metadata: { po: '4711', someCamelKey: 'kept' },
        valid_days: 45,
      });
      const after = Date.now();
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const proposal = res.body;
      expect(Object.keys(proposal).sort()).toEqual(PROPOSAL_KEYS);
      expect(Object.keys(proposal).slice(0, 2)).toEqual(['id', 'object']);
      expect(proposal.id).toMatch(PROPOSAL_ID);
      expect(proposal.number).toMatch(NUMBER);
      expect(proposal.created_at).toMatch(ISO_MS);
      expect(Date.parse(proposal.created_at)).toBeGreaterThanOrEqual(before - 5);
      expect(Date.parse(proposal.created_at)).toBeLessThanOrEqual(after + 5);
      expect(proposal.number.slice(2, 6)).toBe(String(new Date(proposal.created_at).getUTCFullYear()));

      // 3 × 0.10 = 0.30; 1.5 × 1234.56 = 1851.84; 12 × 99.99 = 1199.88; 0.333 × 0.01 = 0.00333 → 0.00
      // subtotal 3052.02; 33.333 % = 1017.3298… → 1017.33; 19 % of 2034.69 = 386.5911 → 386.59; total 2421.28
      const want = expectedTotals(lines, 33.333, 19);
      expect(want.amounts).toEqual([30n, 185_184n, 119_988n, 0n]);
      expect([want.subtotal, want.discount, want.tax, want.total]).toEqual([305_202n, 101_733n, 38_659n, 242_128n]);
      expect(proposal).toMatchObject({
        object: 'proposal',
        deal_id: deal.id,
        title: 'Globex rollout, phase 1',
        status: 'issued',
        currency: 'EUR',
        subtotal: 3052.02,
        discount_percent: 33.333,
        discount: 1017.33,
        tax_percent: 19,
        tax: 386.59,
        total: 2421.28,
        notes: 'Prices exclude travel beyond the first visit.',
        livemode: false,
      });
      expect(proposal.metadata).toEqual({ po: '4711', someCamelKey: 'kept' });
      expect(proposal.line_items).toEqual([
        { description: 'Licences', quantity: 3, unit_price: 0.1, amount: 0.3 },
        { description: 'Onboarding workshop', quantity: 1.5, unit_price: 1234.56, amount: 1851.84 },
        { description: 'Support (12 months)', quantity: 12, unit_price: 99.99, amount: 1199.88 },
        { description: 'Travel', quantity: 0.333, unit_price: 0.01, amount: 0 },
      ]);
      expect(proposal.line_items.map((l) => l.amount)).toEqual(want.amounts.map(major));
      expect(proposal.valid_until).toBe(utcDatePlusDays(proposal.created_at, 45));
      expect(proposal.updated_at).toBe(proposal.created_at);
      expect(proposal.pdf_url).toBe(`${PUBLIC_URL}/v1/proposals/${proposal.id}/pdf`);
      expect(proposal.customer).toEqual({ company: 'Globex Corporation', contact_name: 'Hank Scorpio', contact_email: lead.contact_email });
      expect(proposal.deal_snapshot).toEqual(dealBefore[0]);
      expect(proposal.lead_snapshot).toEqual(leadBefore);

      // pdf_url's path is the route that serves the document.
      const pdf = await pdfOf(key, proposal.id);
      expect(new URL(proposal.pdf_url).pathname).toBe(`/v1/proposals/${proposal.id}/pdf`);
      expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    });

    it('derives one line from the deal when line_items is left out (name, quantity 1, unit_price = value), defaults title and valid_days, customer null without a lead', async () => {
      const key = main.testKey;
      const deal = await createDeal(key, { name: 'Widget subscription', value: 19.99 });
      const dealBefore = (await ok<Json>(app.request('GET', '/v1/deals?limit=100', { key }))).data.find((d: Json) => d.id === deal.id);
      const proposal = await create(key, { deal_id: deal.id });
      expect(proposal.line_items).toEqual([{ description: 'Widget subscription', quantity: 1, unit_price: 19.99, amount: 19.99 }]);
      expect(proposal).toMatchObject({
        title: 'Proposal: Widget subscription',
        currency: 'USD',
        subtotal: 19.99,
        discount_percent: 0,
        discount: 0,
        tax_percent: 0,
        tax: 0,
        total: 19.99,
        notes: null,
        metadata: {},
        customer: null,
        lead_snapshot: null,
        status: 'issued',
      });
      expect(proposal.valid_until).toBe(utcDatePlusDays(proposal.created_at, 30));
      expect(proposal.deal_snapshot).toEqual(dealBefore);
    });

    it('derives the line from a large deal value exactly, and applies discount and tax to it', async () => {
      const key = main.testKey;
      const deal = await createDeal(key, { name: 'Enterprise licence', value: 9_999_999.99 });
      const proposal = await create(key, { deal_id: deal.id, discount_percent: 0.001, tax_percent: 7.5 });
      const want = expectedTotals([{ quantity: 1, unit_price: 9_999_999.99 }], 0.001, 7.5);
      // 999999999 minor × 0.001 % = 9999.99999 → 10000; 7.5 % of 999989999 = 74999249.925 → 74999250
      expect([want.discount, want.tax, want.total]).toEqual([10_000n, 74_999_250n, 1_074_989_249n]);
      expect(proposal).toMatchObject({ subtotal: 9_999_999.99, discount: 100, tax: 749_992.5, total: 10_749_892.49 });
    });

    it('keeps totals exact for awkward inputs: 0.1 × 3, 3 × 0.1, half cents, 1,000,000 × 9,999,999.99', async () => {
      const key = main.testKey;
      const deal = await createDeal(key);
      const cases: Array<{ lines: Array<{ quantity: number; unit_price: number }>; discount?: number; tax?: number; total: number }> = [
        { lines: [{ quantity: 0.1, unit_price: 3 }], total: 0.3 },
        { lines: [{ quantity: 3, unit_price: 0.1 }], total: 0.3 },
        {
          lines: [
            { quantity: 1, unit_price: 0.1 },
            { quantity: 1, unit_price: 0.1 },
            { quantity: 1, unit_price: 0.1 },
          ],
          total: 0.3,
        },
        { lines: [{ quantity: 1, unit_price: 100 }], discount: 33.333, total: 66.67 },
        { lines: [{ quantity: 0.5, unit_price: 0.01 }], total: 0.01 },
        { lines: [{ quantity: 1.005, unit_price: 1 }], total: 1.01 },
        { lines: [{ quantity: 1, unit_price: 0.03 }], discount: 50, tax: 100, total: 0.02 },
        { lines: [{ quantity: 1_000_000, unit_price: 9_999_999.99 }], total: 9_999_999_990_000 },
        { lines: [{ quantity: 3, unit_price: 33.33 }], discount: 100, tax: 19, total: 0 },
      ];
      for (const c of cases) {
        const proposal = await create(key, {
          deal_id: deal.id,
          line_items: c.lines.map((l, i) => ({ description: `Line ${i + 1}`, ...l })),
          ...(c.discount !== undefined ? { discount_percent: c.discount } : {}),
          ...(c.tax !== undefined ? { tax_percent: c.tax } : {}),
        });
        const want = expectedTotals(c.lines, c.discount, c.tax);
        expect({ input: c, total: proposal.total }).toEqual({ input: c, total: c.total });
        expect({ input: c, figures: [proposal.subtotal, proposal.discount, proposal.tax, proposal.total] }).toEqual({
          input: c,
          figures: [want.subtotal, want.discount, want.tax, want.total].map(major),
        });
      }
    });

    it('refuses bad inputs with 400 and the REST parameter, and consumes no number doing so', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const deal = await createDeal(key);
      const line = { description: 'Item', quantity: 1, unit_price: 10 };
      const cases: Array<[string, Json, string, string]> = [
        ['empty line_items', { line_items: [] }, 'parameter_invalid', 'line_items'],
        ['quantity 0', { line_items: [{ ...line, quantity: 0 }] }, 'parameter_invalid', 'line_items[0][quantity]'],
        ['negative quantity', { line_items: [line, { ...line, quantity: -1 }] }, 'parameter_invalid', 'line_items[1][quantity]'],
        ['quantity with float noise', { line_items: [{ ...line, quantity: 0.1 + 0.2 }] }, 'parameter_invalid', 'line_items[0][quantity]'],
        ['quantity with 4 decimals', { line_items: [line, line, { ...line, quantity: 1.0001 }] }, 'parameter_invalid', 'line_items[2][quantity]'],
        ['quantity above 1,000,000', { line_items: [{ ...line, quantity: 1_000_001 }] }, 'parameter_invalid', 'line_items[0][quantity]'],
        ['quantity as text', { line_items: [{ ...line, quantity: 'three' }] }, 'parameter_invalid', 'line_items[0][quantity]'],
        ['unit_price with 3 decimals', { line_items: [{ ...line, unit_price: 1.005 }] }, 'parameter_invalid', 'line_items[0][unit_price]'],
        ['negative unit_price', { line_items: [{ ...line, unit_price: -0.01 }] }, 'parameter_invalid', 'line_items[0][unit_price]'],
        ['blank description', { line_items: [{ ...line, description: '   ' }] }, 'parameter_invalid', 'line_items[0][description]'],
        ['missing unit_price', { line_items: [{ description: 'Item', quantity: 1 }] }, 'parameter_missing', 'line_items[0][unit_price]'],
        ['discount_percent 101', { discount_percent: 101 }, 'parameter_invalid', 'discount_percent'],
        ['discount_percent with 4 decimals', { discount_percent: 33.3333 }, 'parameter_invalid', 'discount_percent'],
        ['negative tax_percent', { tax_percent: -1 }, 'parameter_invalid', 'tax_percent'],
        ['tax_percent 100.5', { tax_percent: 100.5 }, 'parameter_invalid', 'tax_percent'],
        ['valid_days 0', { valid_days: 0 }, 'parameter_invalid', 'valid_days'],
        ['valid_days 366', { valid_days: 366 }, 'parameter_invalid', 'valid_days'],
        ['valid_days 1.5', { valid_days: 1.5 }, 'parameter_invalid', 'valid_days'],
        ['an unknown field', { discount: 5 }, 'parameter_unknown', 'discount'],
        ['a read-only field', { number: 'P-2026-000999' }, 'parameter_unknown', 'number'],
        ['an unknown line field', { line_items: [{ ...line, sku: 'X-1' }] }, 'parameter_unknown', 'line_items[0][sku]'],
        [
          'a line total beyond the maximum',
          { line_items: [{ ...line, quantity: 1_000_000, unit_price: 10_000_000.01 }] },
          'parameter_invalid',
          'line_items[0]',
        ],
      ];
      for (const [label, fields, code, param] of cases) {
        const res = await post(key, { deal_id: deal.id, ...fields });
        const error = (res.body as unknown as Json)?.error;
        expect({ label, status: res.status, code: error?.code, param: error?.param }).toEqual({ label, status: 400, code, param });
        expectError(res, 400, code, param);
      }
      expectError(await post(key, { line_items: [line] }), 400, 'parameter_missing', 'deal_id');

      const first = await create(key, { deal_id: deal.id });
      expect(sequence(first.number)).toBe(1);
    });

    it("is 404 resource_missing with param deal_id for an unknown, malformed, other account's or other mode's deal", async () => {
      const other = await app.createAccount();
      const otherDeal = await createDeal(other.testKey);
      const liveDeal = await createDeal(main.liveKey);
      const unknown = `deal_${'0'.repeat(26)}`;
      for (const dealId of [otherDeal.id, liveDeal.id, unknown, 'deal_nope', 'lead_01J00000000000000000000000', "'; drop table proposals; --"]) {
        expectError(await post(main.testKey, { deal_id: dealId }), 404, 'resource_missing', 'deal_id');
      }
      // …and the live deal is reachable with the live key.
      expect((await create(main.liveKey, { deal_id: liveDeal.id })).livemode).toBe(true);
    });
  });

  describe('GET /v1/proposals/{id}', () => {
    it('answers what the create answered', async () => {
      const lead = await createLead(main.testKey);
      const deal = await createDeal(main.testKey, { lead_id: lead.id, value: 4200 });
      const created = await create(main.testKey, { deal_id: deal.id, discount_percent: 10, tax_percent: 8.25, notes: 'n', metadata: { a: 'b' } });
      const res = await get(main.testKey, created.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    });

    it("is 404 for unknown, malformed, another account's and the other mode's proposal", async () => {
      const deal = await createDeal(main.testKey);
      const mine = await create(main.testKey, { deal_id: deal.id });
      const other = await app.createAccount();
      const theirs = await create(other.testKey, { deal_id: (await createDeal(other.testKey)).id });
      const live = await create(main.liveKey, { deal_id: (await createDeal(main.liveKey)).id });

      expect((await get(main.testKey, mine.id)).status).toBe(200);
      expect((await get(other.testKey, theirs.id)).status).toBe(200);
      expect((await get(main.liveKey, live.id)).status).toBe(200);
      const missing: Array<[string, string]> = [
        [main.testKey, `prop_${'0'.repeat(26)}`],
        [main.testKey, 'prop_123'],
        [main.testKey, deal.id],
        [main.testKey, 'not-an-id'],
        [main.testKey, theirs.id],
        [main.testKey, live.id],
        [main.liveKey, mine.id],
        [other.testKey, mine.id],
      ];
      for (const [key, id] of missing) {
        expectError(await get(key, id), 404, 'resource_missing', 'id');
        const pdf = await getPdf(key, id);
        expect({ id, status: pdf.status }).toEqual({ id, status: 404 });
        expect(JSON.parse(pdf.bytes.toString('utf8')).error.code).toBe('resource_missing');
      }
    });

    it('shows status expired once valid_until has passed', async () => {
      const proposal = await create(main.testKey, { deal_id: (await createDeal(main.testKey)).id, valid_days: 1 });
      expect(proposal.status).toBe('issued');
      await app.orm.em.fork().getConnection().execute(`update proposals set valid_until = '2001-02-03' where id = ?`, [proposal.id]);
      const res = await get(main.testKey, proposal.id);
      expect(res.body).toMatchObject({ status: 'expired', valid_until: '2001-02-03' });
    });
  });

  describe('numbers', () => {
    it('are sequential per account and mode: test and live count separately, another account starts at 000001', async () => {
      const a = await app.createAccount();
      const b = await app.createAccount();
      const testDeal = await createDeal(a.testKey);
      const liveDeal = await createDeal(a.liveKey);
      const year = new Date().getUTCFullYear();

      const t1 = await create(a.testKey, { deal_id: testDeal.id });
      const t2 = await create(a.testKey, { deal_id: testDeal.id });
      const l1 = await create(a.liveKey, { deal_id: liveDeal.id });
      const t3 = await create(a.testKey, { deal_id: (await createDeal(a.testKey)).id });
      const l2 = await create(a.liveKey, { deal_id: liveDeal.id });
      const b1 = await create(b.testKey, { deal_id: (await createDeal(b.testKey)).id });
      const b2live = await create(b.liveKey, { deal_id: (await createDeal(b.liveKey)).id });

      expect([t1, t2, t3].map((p) => p.number)).toEqual([`P-${year}-000001`, `P-${year}-000002`, `P-${year}-000003`]);
      expect([l1, l2].map((p) => p.number)).toEqual([`P-${year}-000001`, `P-${year}-000002`]);
      expect([l1.livemode, l2.livemode, t1.livemode]).toEqual([true, true, false]);
      expect(b1.number).toBe(`P-${year}-000001`);
      expect(b2live.number).toBe(`P-${year}-000001`);
    });

    it('20 concurrent generations get 20 distinct numbers forming a contiguous run', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const deal = await createDeal(key);
      const before = await create(key, { deal_id: deal.id });
      expect(sequence(before.number)).toBe(1);
      const otherDeal = await createDeal(key);

      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(key, { deal_id: i % 2 ? deal.id : otherDeal.id, line_items: [{ description: `Concurrent ${i}`, quantity: i + 1, unit_price: 1.1 }] }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
      const numbers = results.map((r) => r.body.number);
      expect(new Set(numbers).size).toBe(20);
      expect(numbers.map(sequence).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
      expect(new Set(numbers.map((n) => n.slice(0, 7))).size).toBe(1);
      // Each answer is the proposal stored under that number.
      for (const res of results) expect((await get(key, res.body.id)).body.number).toBe(res.body.number);
      // The next one continues the run.
      expect(sequence((await create(key, { deal_id: deal.id })).number)).toBe(22);
    });

    it('concurrent generations in test and live mode number each mode from 000001 without gaps', async () => {
      const account = await app.createAccount();
      const testDeal = await createDeal(account.testKey);
      const liveDeal = await createDeal(account.liveKey);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 ? post(account.liveKey, { deal_id: liveDeal.id }) : post(account.testKey, { deal_id: testDeal.id }))),
      );
      expect(results.map((r) => r.status)).toEqual(Array(16).fill(201));
      const byMode = (live: boolean) =>
        results
          .filter((r) => r.body.livemode === live)
          .map((r) => sequence(r.body.number))
          .sort((x, y) => x - y);
      expect(byMode(false)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(byMode(true)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });
  });

  describe('frozen at generation', () => {
    it('editing the deal and the lead afterwards changes neither the proposal nor its PDF', async () => {
      const key = main.testKey;
      const lead = await createLead(key, { company: 'Umbrella Holdings', contact_name: 'Albert Wesker' });
      const deal = await createDeal(key, { name: 'Umbrella research', value: 777.77, lead_id: lead.id });
      const proposal = await create(key, { deal_id: deal.id, notes: 'Frozen notes' });
      const pdfBefore = await pdfOf(key, proposal.id);
      const etag = pdfBefore.headers.get('etag');
      expect(etag).toBeTruthy();

      const editedDeal = await ok<Json>(
        app.request('PUT', `/v1/deals/${deal.id}`, { key, body: { name: 'Renamed research', value: 1.23, stage: 'qualification' } }),
      );
      expect(editedDeal).toMatchObject({ name: 'Renamed research', value: 1.23, stage: 'qualification' });
      const editedLead = await ok<Json>(app.request('PUT', `/v1/leads/${lead.id}`, { key, body: { company: 'Renamed Corp', contact_name: 'Someone Else' } }));
      expect(editedLead).toMatchObject({ company: 'Renamed Corp', contact_name: 'Someone Else' });

      const after = await get(key, proposal.id);
      expect(after.status).toBe(200);
      expect(after.body).toEqual(proposal);
      expect(after.body.deal_snapshot).toMatchObject({ name: 'Umbrella research', value: 777.77, stage: 'prospecting' });
      expect(after.body.lead_snapshot).toMatchObject({ company: 'Umbrella Holdings', contact_name: 'Albert Wesker' });
      expect(after.body.customer).toMatchObject({ company: 'Umbrella Holdings', contact_name: 'Albert Wesker' });

      const pdfAfter = await pdfOf(key, proposal.id);
      expect(pdfAfter.bytes.equals(pdfBefore.bytes)).toBe(true);
      expect(pdfAfter.headers.get('etag')).toBe(etag);
      const text = flat((await pdfText(pdfAfter.bytes)).text);
      expect(text).toContain('Umbrella Holdings');
      expect(text).toContain('Albert Wesker');
      expect(text).toContain('Umbrella research');
      expect(text).not.toContain('Renamed');
      expect(text).not.toContain('Someone Else');

      // A proposal generated now sees the edits, so the first one is frozen, not stale by accident.
      const fresh = await create(key, { deal_id: deal.id });
      expect(fresh).toMatchObject({ title: 'Proposal: Renamed research', total: 1.23, customer: { company: 'Renamed Corp', contact_name: 'Someone Else' } });
      expect(fresh.deal_snapshot).toMatchObject({ name: 'Renamed research', stage: 'qualification' });
      const freshPdf = await pdfOf(key, fresh.id);
      expect(freshPdf.headers.get('etag')).not.toBe(etag);
      expect(flat((await pdfText(freshPdf.bytes)).text)).toContain('Renamed Corp');
    });

    it('a deal without a lead: the PDF addresses the deal by its name at generation, and a later rename changes nothing', async () => {
      const key = main.testKey;
      const deal = await createDeal(key, { name: 'Solo venture', value: 250 });
      const proposal = await create(key, { deal_id: deal.id, title: 'Offer' });
      const pdfBefore = await pdfOf(key, proposal.id);
      expect(flat((await pdfText(pdfBefore.bytes)).text)).toContain('PREPARED FOR Solo venture');

      await ok(app.request('PUT', `/v1/deals/${deal.id}`, { key, body: { name: 'Duo venture', value: 500, stage: 'qualification' } }));
      expect((await get(key, proposal.id)).body).toEqual(proposal);
      const pdfAfter = await pdfOf(key, proposal.id);
      expect(pdfAfter.bytes.equals(pdfBefore.bytes)).toBe(true);
      expect(pdfAfter.headers.get('etag')).toBe(pdfBefore.headers.get('etag'));
    });
  });

  describe('GET /v1/proposals/{id}/pdf', () => {
    let proposal: Proposal;
    let lead: Json;
    let pdf: PdfResponse;
    const lines = [
      { description: 'Network assessment', quantity: 2, unit_price: 1500 },
      { description: 'Firewall appliance', quantity: 3, unit_price: 2345.67 },
      { description: 'Managed service, first year', quantity: 12, unit_price: 899.99 },
      { description: 'Cabling', quantity: 0.75, unit_price: 120.5 },
    ];

    beforeAll(async () => {
      lead = await createLead(main.testKey, { company: 'Vandelay Industries', contact_name: 'Art Vandelay' });
      const deal = await createDeal(main.testKey, { name: 'Vandelay network refresh', value: 50_000, lead_id: lead.id });
      proposal = await create(main.testKey, {
        deal_id: deal.id,
        title: 'Network refresh',
        line_items: lines,
        discount_percent: 12.5,
        tax_percent: 8.875,
        notes: 'Installation within 10 business days of signature.',
        valid_days: 14,
      });
      pdf = await pdfOf(main.testKey, proposal.id);
    });

    it('is application/pdf, an attachment named <number>.pdf, with a strong ETag, and a real PDF', () => {
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-type')).toMatch(/^application\/pdf/);
      // RFC 6266: a token filename needs no quotes ("attachment; filename=P-2026-000001.pdf").
      const disposition = pdf.headers.get('content-disposition') ?? '';
      expect(disposition).toMatch(/^attachment; filename=/);
      expect(/filename="?([^";]+)"?/.exec(disposition)?.[1]).toBe(`${proposal.number}.pdf`);
      expect(pdf.headers.get('etag')).toMatch(/^"[^"]+"$/);
      expect(pdf.headers.get('x-request-id')).toBeTruthy();
      expect(Number(pdf.headers.get('content-length'))).toBe(pdf.bytes.length);
      expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(pdf.bytes.subarray(-6).toString('latin1')).toMatch(/%%EOF\s*$/);
    });

    it('answers 304 with no body to If-None-Match with the ETag, and 200 to another ETag', async () => {
      const etag = pdf.headers.get('etag')!;
      const cached = await conditionalPdf(main.testKey, proposal.id, etag);
      expect(cached.status).toBe(304);
      expect(cached.bytes.length).toBe(0);
      expect(cached.headers.get('etag')).toBe(etag);
      const stale = await conditionalPdf(main.testKey, proposal.id, '"something-else"');
      expect(stale.status).toBe(200);
      expect(stale.bytes.equals(pdf.bytes)).toBe(true);
    });

    it('once stored, is still 404 to another account and to the other mode (the stored row is read tenant-scoped)', async () => {
      const other = await app.createAccount();
      for (const key of [other.testKey, other.liveKey, main.liveKey]) {
        const refused = await getPdf(key, proposal.id);
        expect({ key: key.slice(0, 8), status: refused.status }).toEqual({ key: key.slice(0, 8), status: 404 });
        expect(JSON.parse(refused.bytes.toString('utf8')).error.code).toBe('resource_missing');
      }
    });

    it('is byte-identical on every request, under the same name', async () => {
      const again = await pdfOf(main.testKey, proposal.id);
      expect(again.bytes.equals(pdf.bytes)).toBe(true);
      expect(again.headers.get('etag')).toBe(pdf.headers.get('etag'));
      // The first answer was rendered; this one is the stored row, which keeps the name too.
      expect(again.headers.get('content-disposition')).toBe(pdf.headers.get('content-disposition'));
    });

    it('shows the account, the number, the customer, every line, the totals, validity and notes', async () => {
      const { text, total } = await pdfText(pdf.bytes);
      const flatText = flat(text);
      expect(total).toBe(1);
      expect(flatText).toContain('Initech Consulting');
      expect(flatText).toContain(proposal.number);
      expect(flatText).toContain('Network refresh');
      expect(flatText).toContain('Vandelay Industries');
      expect(flatText).toContain('Art Vandelay');
      expect(flatText).toContain(lead.contact_email);
      const want = expectedTotals(lines, 12.5, 8.875);
      lines.forEach((line, i) => {
        expect(flatText).toContain(line.description);
        expect(flatText).toContain(printed(want.amounts[i], 'USD'));
      });
      expect(flatText).toContain(printed(want.subtotal, 'USD'));
      expect(flatText).toContain(printed(want.discount, 'USD'));
      expect(flatText).toContain(printed(want.tax, 'USD'));
      expect(flatText).toContain(`Total ${printed(want.total, 'USD')}`);
      expect(proposal.total).toBe(major(want.total));
      // 3000.00 + 7037.01 + 10799.88 + 90.375 → 90.38 = 20927.27; −12.5 % (2615.90875 → 2615.91) = 18311.36; +8.875 % (1625.133…) = 19936.49
      expect(printed(want.total, 'USD')).toBe('USD 19,936.49');
      expect(flatText).toContain(proposal.valid_until);
      expect(flatText).toContain('Installation within 10 business days of signature.');
    });

    it('flows 80 long lines onto several pages, every line present once, the total on the last page', async () => {
      const long = Array.from({ length: 80 }, (_, i) => ({
        description: `Item ${String(i + 1).padStart(3, '0')} quarterly maintenance window with extended on-site coverage and spare parts`,
        quantity: (i % 7) + 1,
        unit_price: 10 + i / 4,
      }));
      const deal = await createDeal(main.testKey, { name: 'Long list' });
      const big = await create(main.testKey, { deal_id: deal.id, line_items: long, notes: 'End of the long list.' });
      expect(big.line_items).toHaveLength(80);
      const bytes = (await pdfOf(main.testKey, big.id)).bytes;
      const { text, total, pages } = await pdfText(bytes);
      expect(total).toBeGreaterThan(1);
      expect(pages).toHaveLength(total);
      const denseText = dense(text);
      for (const line of long) {
        expect({ line: line.description, count: occurrences(denseText, dense(line.description)) }).toEqual({ line: line.description, count: 1 });
      }
      const want = expectedTotals(long);
      const last = flat(pages[pages.length - 1]);
      expect(last).toContain(`Total ${printed(want.total, 'USD')}`);
      expect(last).toContain('End of the long list.');
      pages.forEach((page, i) => expect(flat(page)).toContain(`page ${i + 1} of ${total}`));
      // The table header repeats on every page.
      for (const page of pages) expect(flat(page)).toContain('Description Qty Unit price Amount');
      expect((await pdfOf(main.testKey, big.id)).bytes.equals(bytes)).toBe(true);
    });

    it('renders é, ü, ß and 日本 in the account, customer and lines', async () => {
      const account = await app.createAccount({ name: 'Müller & Söhne Straßenbau 日本支社' });
      const key = account.testKey;
      const lead = await createLead(key, { company: 'Café Zürich Größe AG', contact_name: 'Renée Weiß' });
      const deal = await createDeal(key, { name: 'Übergabe', lead_id: lead.id });
      const p = await create(key, {
        deal_id: deal.id,
        title: 'Angebot für Café Zürich',
        line_items: [
          { description: 'Beratung für Größe und Maß', quantity: 1, unit_price: 100 },
          { description: '日本語サポート', quantity: 2, unit_price: 50 },
          { description: 'Crème brûlée tasting', quantity: 1, unit_price: 9.5 },
        ],
        notes: 'Grüße aus München — 東京',
      });
      const { text } = await pdfText((await pdfOf(key, p.id)).bytes);
      for (const expected of [
        'Müller & Söhne Straßenbau 日本支社',
        'Café Zürich Größe AG',
        'Renée Weiß',
        'Angebot für Café Zürich',
        'Beratung für Größe und Maß',
        '日本語サポート',
        'Crème brûlée tasting',
        'Grüße aus München — 東京',
      ]) {
        expect(dense(text)).toContain(dense(expected));
      }
      // Latin text that does not wrap comes out word for word.
      expect(flat(text)).toContain('Café Zürich Größe AG');
      expect(flat(text)).toContain('Renée Weiß');
      expect(flat(text)).toContain('Total USD 209.50');
    });

    it('prints characters the font lacks (Hangul) as "?" without breaking the document; the JSON keeps them', async () => {
      const key = main.testKey;
      const lead = await createLead(key, { company: '한국 Trading', contact_name: '김민수 Kim' });
      const deal = await createDeal(key, { name: '서울 deal', lead_id: lead.id });
      const p = await create(key, { deal_id: deal.id, line_items: [{ description: '설치 Installation', quantity: 1, unit_price: 10 }], notes: '감사합니다' });
      expect(p.customer).toMatchObject({ company: '한국 Trading', contact_name: '김민수 Kim' });
      expect(p.line_items[0].description).toBe('설치 Installation');
      const res = await pdfOf(key, p.id);
      expect(res.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const { text, total } = await pdfText(res.bytes);
      expect(total).toBe(1);
      const flatText = flat(text);
      expect(flatText).toContain('?? Trading');
      expect(flatText).toContain('??? Kim');
      expect(flatText).toContain('?? Installation');
      expect(flatText).toContain('?????');
      expect(flatText).toContain(p.number);
      expect(flatText).toContain('Total USD 10.00');
      expect(flatText).not.toMatch(/[\uAC00-\uD7AF]/);
    });
  });

  describe('GraphQL', () => {
    it("deal(id) { proposals } lists the deal's proposals newest first, and only them", async () => {
      const key = main.testKey;
      const deal = await createDeal(key, { name: 'Listed deal', value: 10 });
      const otherDeal = await createDeal(key);
      const made: Proposal[] = [];
      for (const value of [1, 2, 3]) {
        made.push(await create(key, { deal_id: deal.id, line_items: [{ description: `v${value}`, quantity: value, unit_price: 1.1 }] }));
        await create(key, { deal_id: otherDeal.id });
      }
      const res = await app.graphql(`query D($id: ID!) { deal(id: $id) { id proposals { object data { id number total } hasMore } } }`, { id: deal.id }, key);
      expect(res.body.errors).toBeUndefined();
      const list = res.body.data.deal.proposals;
      expect(list.object).toBe('list');
      expect(list.hasMore).toBe(false);
      expect(list.data).toEqual(
        made
          .slice()
          .reverse()
          .map((p) => ({ id: p.id, number: p.number, total: p.total })),
      );
      expect(list.data.map((p: Json) => p.total)).toEqual([3.3, 2.2, 1.1]);

      const paged = await app.graphql(
        `query D($id: ID!) { deal(id: $id) { proposals(filter: { limit: 2 }) { data { id } hasMore nextCursor } } }`,
        { id: deal.id },
        key,
      );
      const page = paged.body.data.deal.proposals;
      expect(page.data.map((p: Json) => p.id)).toEqual([made[2].id, made[1].id]);
      expect(page.hasMore).toBe(true);
      const rest = await app.graphql(
        `query D($id: ID!, $c: String) { deal(id: $id) { proposals(filter: { limit: 2, cursor: $c }) { data { id } hasMore } } }`,
        { id: deal.id, c: page.nextCursor },
        key,
      );
      expect(rest.body.data.deal.proposals).toEqual({ data: [{ id: made[0].id }], hasMore: false });
    });

    it('proposalPdf(id) returns base64 bytes equal to the REST PDF, with its filename and ETag', async () => {
      const key = main.testKey;
      const proposal = await create(key, { deal_id: (await createDeal(key, { name: 'GraphQL PDF' })).id, tax_percent: 5 });
      const rest = await pdfOf(key, proposal.id);
      const res = await app.graphql(`query P($id: ID!) { proposalPdf(id: $id) { filename contentType contentBase64 etag } }`, { id: proposal.id }, key);
      expect(res.body.errors).toBeUndefined();
      const file = res.body.data.proposalPdf;
      expect(file.filename).toBe(`${proposal.number}.pdf`);
      expect(file.contentType).toBe('application/pdf');
      expect(Buffer.from(file.contentBase64, 'base64').equals(rest.bytes)).toBe(true);
      expect(file.etag).toBe(rest.headers.get('etag'));
    });

    it('createProposal and proposal(id) agree with REST, in camelCase', async () => {
      const key = main.testKey;
      const deal = await createDeal(key, { name: 'GraphQL made' });
      const res = await app.graphql(
        `mutation C($input: ProposalCreateInput!) { createProposal(input: $input) { id number total subtotal discount tax pdfUrl validUntil lineItems { description quantity unitPrice amount } } }`,
        { input: { dealId: deal.id, lineItems: [{ description: 'Thirds', quantity: 0.333, unitPrice: 100 }], discountPercent: 33.333 } },
        key,
      );
      expect(res.body.errors).toBeUndefined();
      const made = res.body.data.createProposal;
      // 0.333 × 100.00 = 33.30; 33.333 % = 11.0998… → 11.10; total 22.20
      expect(made).toMatchObject({
        subtotal: 33.3,
        discount: 11.1,
        tax: 0,
        total: 22.2,
        lineItems: [{ description: 'Thirds', quantity: 0.333, unitPrice: 100, amount: 33.3 }],
      });
      expect(made.pdfUrl).toBe(`${PUBLIC_URL}/v1/proposals/${made.id}/pdf`);
      const rest = (await get(key, made.id)).body;
      expect(rest).toMatchObject({ number: made.number, total: 22.2, valid_until: made.validUntil });
      const bad = await app.graphql(
        `mutation C($input: ProposalCreateInput!) { createProposal(input: $input) { id } }`,
        { input: { dealId: deal.id, lineItems: [{ description: 'x', quantity: 0.0001, unitPrice: 1 }] } },
        key,
      );
      expect(bad.body.errors[0].extensions).toMatchObject({ errorCode: 'parameter_invalid', param: 'lineItems.0.quantity' });
    });
  });

  describe('events', () => {
    async function proposalEvents(key: string): Promise<Json[]> {
      const res = await app.graphql(
        `{ events(filter: { type: "proposal.created", limit: 100 }) { data { id object type livemode apiVersion data } } }`,
        {},
        key,
      );
      if (res.status !== 200 || res.body.errors) throw new Error(`events query failed: ${res.status} ${res.text.slice(0, 400)}`);
      return res.body.data.events.data;
    }

    it('creating a proposal writes one proposal.created event whose data.object is the proposal as GET shows it', async () => {
      const account = await app.createAccount();
      const key = account.testKey;
      const lead = await createLead(key);
      const deal = await createDeal(key, { lead_id: lead.id });
      expect(await proposalEvents(key)).toEqual([]);
      const proposal = await create(key, { deal_id: deal.id, line_items: [{ description: 'Evented', quantity: 2, unit_price: 3.33 }], metadata: { k: 'v' } });
      // Refused creations write nothing.
      expect((await post(key, { deal_id: deal.id, valid_days: 0 })).status).toBe(400);

      const events = await proposalEvents(key);
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event).toMatchObject({ object: 'event', type: 'proposal.created', livemode: false, apiVersion: 'v1' });
      expect(event.id).toMatch(/^evt_/);
      const shown = (await get(key, proposal.id)).body;
      expect(event.data.object).toEqual(shown);
      expect(event.data.previous_attributes).toEqual({});

      // Live mode's event is live mode's only.
      const live = await create(account.liveKey, { deal_id: (await createDeal(account.liveKey)).id });
      const liveEvents = await proposalEvents(account.liveKey);
      expect(liveEvents.map((e) => e.data.object.id)).toEqual([live.id]);
      expect(liveEvents[0].livemode).toBe(true);
      expect((await proposalEvents(key)).map((e) => e.data.object.id)).toEqual([proposal.id]);
    });
  });
});

describe('proposals under the default per-operation limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { PUBLIC_URL } });
  });
  afterAll(() => app.close());

  it('generateProposal allows 20 per minute per account and mode, then 429 rate_limit_exceeded with Retry-After', async () => {
    const account = await app.createAccount();
    const deal = (await app.request('POST', '/v1/deals', { key: account.testKey, body: { name: 'Limited', value: 5 } })).body;
    const results = await Promise.all(
      Array.from({ length: 20 }, () => app.request('POST', '/v1/proposals', { key: account.testKey, body: { deal_id: deal.id } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const over = await app.request('POST', '/v1/proposals', { key: account.testKey, body: { deal_id: deal.id } });
    expectError(over, 429, 'rate_limit_exceeded', undefined);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);

    // Live mode and another account have their own allowance, and the refused call took no number.
    const liveDeal = (await app.request('POST', '/v1/deals', { key: account.liveKey, body: { name: 'Live', value: 5 } })).body;
    const live = await app.request('POST', '/v1/proposals', { key: account.liveKey, body: { deal_id: liveDeal.id } });
    expect(live.status).toBe(201);
    expect(live.body.number).toMatch(/-000001$/);
    const other = await app.createAccount();
    const otherDeal = (await app.request('POST', '/v1/deals', { key: other.testKey, body: { name: 'Other', value: 5 } })).body;
    expect((await app.request('POST', '/v1/proposals', { key: other.testKey, body: { deal_id: otherDeal.id } })).status).toBe(201);
    const numbers = results.map((r) => Number(r.body.number.slice(-6))).sort((x: number, y: number) => x - y);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const counter = await app.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ last_number: number }>>('select last_number from proposal_numbers where account_id = ? and livemode = false', [account.account.id]);
    expect(counter.map((row) => Number(row.last_number))).toEqual([20]);
  });
});
