import { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApiError } from '../../src/common/api-error';
import { newId } from '../../src/common/ids';
import { CONFLICTS } from '../../src/app/modules';
import { mapDatabaseError } from '../../src/db/database-errors';
import { scopeTo, TenantScope } from '../../src/db/tenant';
import { Account } from '../../src/modules/accounts/account.entity';
import { AccountService } from '../../src/modules/accounts/account.service';
import { Lead } from '../../src/modules/leads/lead.entity';
import { LeadCreateInput, LeadUpdateInput } from '../../src/modules/leads/lead.inputs';
import { LeadStatus } from '../../src/modules/leads/lead-status';
import { LeadService } from '../../src/modules/leads/lead.service';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';
import { ScoringService } from '../../src/modules/scoring/scoring.service';
import { truncateAll, workerOrm } from '../helpers/database';
import { testSerializer } from '../helpers/events';
import { EventRecorder } from '../../src/events/event-recorder';
import { RestSerializer } from '../../src/rest/serialize';

const scorer = new PriorLeadScorer();

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const error = mapDatabaseError(await rejection(promise), CONFLICTS);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const input = (fields: Partial<LeadCreateInput> & { contactEmail: string }): LeadCreateInput =>
  Object.assign(new LeadCreateInput(), { company: 'Acme', ...fields });
const patch = (fields: Partial<LeadUpdateInput>): LeadUpdateInput => Object.assign(new LeadUpdateInput(), fields);

describe('LeadService on a real database', () => {
  let orm: MikroORM;
  let accountA: Account;
  let accountB: Account;
  let serializer: RestSerializer;

  /** Unscoped, as a request that forgot its tenant would be. */
  const unscopedService = () => {
    const em = orm.em.fork();
    return new LeadService(em, new ScoringService(em, scorer), new EventRecorder(em, serializer));
  };
  /** A fresh EntityManager per call, as each request gets one, scoped to one account and mode. */
  const service = (scope: TenantScope) => {
    const em = scopeTo(orm.em.fork(), scope);
    return new LeadService(em, new ScoringService(em, scorer), new EventRecorder(em, serializer));
  };
  const testA = () => service({ accountId: accountA.id, livemode: false });
  const liveA = () => service({ accountId: accountA.id, livemode: true });
  const testB = () => service({ accountId: accountB.id, livemode: false });

  beforeAll(async () => {
    orm = await workerOrm();
    serializer = await testSerializer();
  });
  afterAll(() => orm.close());
  beforeEach(async () => {
    await truncateAll(orm);
    const accounts = new AccountService(orm.em.fork());
    accountA = await accounts.create({ name: 'A', email: 'a@a.test' });
    accountB = await accounts.create({ name: 'B', email: 'b@b.test' });
  });

  describe('create', () => {
    it("stamps the lead with the scope's account and mode, normalises input and scores it", async () => {
      const lead = await testA().create(input({ company: '  Acme Corp  ', contactEmail: ' Jane@ACME.test ', industry: 'Software', employees: 300 }));
      expect(lead.id).toMatch(/^lead_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(lead.account.id).toBe(accountA.id);
      expect(lead.livemode).toBe(false);
      expect(lead.company).toBe('Acme Corp');
      expect(lead.contactEmail).toBe('jane@acme.test');
      expect(lead.status).toBe(LeadStatus.new);
      expect(lead.metadata).toEqual({});
      const expected = scorer.score({ company: 'Acme Corp', contactEmail: 'jane@acme.test', industry: 'Software', employees: 300 });
      expect(lead.score).toBe(expected.score);
      expect(lead.scoreLabel).toBe(expected.label);
      expect(lead.modelVersion).toBe('prior-v1');

      const row = await orm.em.getConnection().execute('select account_id, livemode, contact_email, score, score_signals from leads where id = ?', [lead.id]);
      expect(row).toEqual([expect.objectContaining({ account_id: accountA.id, livemode: false, contact_email: 'jane@acme.test', score: expected.score })]);
      expect(row[0].score_signals).toEqual(expected.signals);
    });

    it('writes live leads with livemode true', async () => {
      const lead = await liveA().create(input({ contactEmail: 'x@acme.test' }));
      expect(lead.livemode).toBe(true);
      expect((await liveA().get(lead.id)).livemode).toBe(true);
    });

    it('refuses a duplicate contact email within one account and mode as resource_conflict, case-insensitively', async () => {
      await testA().create(input({ contactEmail: 'dup@acme.test' }));
      const error = await apiError(testA().create(input({ contactEmail: 'DUP@acme.test' })));
      expect(error.errorCode).toBe('resource_conflict');
      expect(error.param).toBe('contactEmail');
      expect(error.message).not.toMatch(/insert|duplicate key|constraint/i);
    });

    it('allows the same contact email once per mode and once per account', async () => {
      const leads = await Promise.all(
        [testA(), liveA(), testB(), service({ accountId: accountB.id, livemode: true })].map((s) => s.create(input({ contactEmail: 'same@x.test' }))),
      );
      expect(new Set(leads.map((l) => l.id)).size).toBe(4);
    });
  });

  describe('get', () => {
    it('finds the lead in its own scope only', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test' }));
      expect((await testA().get(lead.id)).id).toBe(lead.id);
      for (const other of [liveA(), testB(), service({ accountId: accountB.id, livemode: true })]) {
        const error = await apiError(other.get(lead.id));
        expect(error.errorCode).toBe('resource_missing');
        expect(error.status).toBe(404);
      }
    });

    it('treats unknown and malformed ids as not found', async () => {
      for (const id of [newId('lead'), newId('deal'), 'lead_123', 'nope', '', "lead_' or 1=1 --"]) {
        const error = await apiError(testA().get(id));
        expect(error.errorCode).toBe('resource_missing');
        expect(error.param).toBe('id');
      }
    });
  });

  describe('update', () => {
    it('changes only the fields sent', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test', industry: 'Retail', employees: 20, country: 'DE', metadata: { a: '1' } }));
      const updated = await testA().update(lead.id, patch({ country: 'FR' }));
      expect(updated).toMatchObject({ country: 'FR', industry: 'Retail', employees: 20, company: 'Acme', contactEmail: 'a@acme.test', metadata: { a: '1' } });
      const reread = await testA().get(lead.id);
      expect(reread).toMatchObject({ country: 'FR', industry: 'Retail', employees: 20 });
      expect(reread.updatedAt.getTime()).toBeGreaterThanOrEqual(lead.updatedAt.getTime());
      expect(reread.createdAt.toISOString()).toBe(lead.createdAt.toISOString());
    });

    it('clears an optional field sent as null', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test', industry: 'Retail', contactName: 'Jo' }));
      await testA().update(lead.id, patch({ industry: null, contactName: null }));
      expect(await testA().get(lead.id)).toMatchObject({ industry: null, contactName: null });
    });

    it('rescores when a scored field changes, and only then', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@gmail.com', employees: 5 }));
      const scoredAt = lead.scoredAt.getTime();
      const rescored = await testA().update(lead.id, patch({ contactEmail: 'a@acme.test', employees: 500, industry: 'Software' }));
      const expected = scorer.score({ company: 'Acme', contactEmail: 'a@acme.test', employees: 500, industry: 'Software' });
      expect(rescored.score).toBe(expected.score);
      expect(rescored.score).toBeGreaterThan(lead.score);
      expect(rescored.scoreLabel).toBe(expected.label);
      expect((await testA().score(lead.id)).signals).toEqual(expected.signals);
      expect(rescored.scoredAt.getTime()).toBeGreaterThanOrEqual(scoredAt);

      const before = await testA().get(lead.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const untouched = await testA().update(lead.id, patch({ metadata: { k: 'v' }, status: LeadStatus.contacted }));
      expect(untouched.scoredAt.toISOString()).toBe(before.scoredAt.toISOString());
      expect(untouched.score).toBe(before.score);
    });

    it('merges metadata: keys sent are set, null removes a key, others stay', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test', metadata: { keep: '1', drop: '2', change: '3' } }));
      await testA().update(lead.id, patch({ metadata: { drop: null, change: 'new', add: '4' } }));
      expect((await testA().get(lead.id)).metadata).toEqual({ keep: '1', change: 'new', add: '4' });
    });

    it('refuses metadata that would exceed 50 keys once merged', async () => {
      const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
      const lead = await testA().create(input({ contactEmail: 'a@acme.test', metadata: many }));
      const more = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`m${i}`, 'v']));
      const error = await apiError(testA().update(lead.id, patch({ metadata: more })));
      expect(error.errorCode).toBe('parameter_invalid');
      expect(error.param).toBe('metadata');
      expect(Object.keys((await testA().get(lead.id)).metadata)).toHaveLength(40);
      await testA().update(lead.id, patch({ metadata: { ...more, k0: null } }));
      expect(Object.keys((await testA().get(lead.id)).metadata)).toHaveLength(50);
    });

    it('applies status rules and leaves the lead unchanged when a move is refused', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test' }));
      await testA().update(lead.id, patch({ status: LeadStatus.qualified }));
      const error = await apiError(testA().update(lead.id, patch({ status: LeadStatus.new, country: 'FR' })));
      expect(error.errorCode).toBe('invalid_status_transition');
      expect(error.status).toBe(409);
      expect(error.param).toBe('status');
      expect(await testA().get(lead.id)).toMatchObject({ status: LeadStatus.qualified, country: null });
      await testA().update(lead.id, patch({ status: LeadStatus.disqualified }));
      expect((await testA().get(lead.id)).status).toBe(LeadStatus.disqualified);
    });

    it('refuses changing the email to one another lead of the scope has', async () => {
      await testA().create(input({ contactEmail: 'taken@acme.test' }));
      const lead = await testA().create(input({ contactEmail: 'free@acme.test' }));
      const error = await apiError(testA().update(lead.id, patch({ contactEmail: 'Taken@acme.test' })));
      expect(error.errorCode).toBe('resource_conflict');
      expect((await testA().get(lead.id)).contactEmail).toBe('free@acme.test');
      await liveA().create(input({ contactEmail: 'live@acme.test' }));
      expect((await testA().update(lead.id, patch({ contactEmail: 'live@acme.test' }))).contactEmail).toBe('live@acme.test');
    });

    it("cannot change another scope's lead", async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test' }));
      for (const other of [liveA(), testB()]) {
        expect((await apiError(other.update(lead.id, patch({ company: 'Hijacked' })))).errorCode).toBe('resource_missing');
        expect((await apiError(other.delete(lead.id))).errorCode).toBe('resource_missing');
      }
      expect((await testA().get(lead.id)).company).toBe('Acme');
    });
  });

  describe('delete', () => {
    it('removes the row and returns its id', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test' }));
      expect(await testA().delete(lead.id)).toBe(lead.id);
      expect((await apiError(testA().get(lead.id))).errorCode).toBe('resource_missing');
      expect((await apiError(testA().delete(lead.id))).errorCode).toBe('resource_missing');
      expect(await orm.em.getConnection().execute('select count(*)::int as n from leads')).toEqual([{ n: 0 }]);
      // The email is free again.
      await testA().create(input({ contactEmail: 'a@acme.test' }));
    });
  });

  describe('score', () => {
    it("explains the stored score: base plus the signals' impacts", async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test', industry: 'Finance', employees: 80, source: 'referral' }));
      const score = await testA().score(lead.id);
      expect(score).toMatchObject({ leadId: lead.id, score: lead.score, scoreLabel: lead.scoreLabel, modelVersion: 'prior-v1' });
      expect(score.baseScore + score.signals.reduce((sum, s) => sum + s.impact, 0)).toBe(score.score);
      expect(score.scoredAt).toBeInstanceOf(Date);
    });
  });

  describe('list', () => {
    it("lists only the scope's leads, newest first", async () => {
      const a1 = await testA().create(input({ contactEmail: '1@a.test' }));
      const a2 = await testA().create(input({ contactEmail: '2@a.test' }));
      await liveA().create(input({ contactEmail: '3@a.test' }));
      await testB().create(input({ contactEmail: '4@b.test' }));
      const page = await testA().list();
      expect(page.data.map((l) => l.id)).toEqual([a2.id, a1.id]);
      expect(page).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it('walks every row exactly once through cursors, even while rows are inserted', async () => {
      const all: string[] = [];
      for (let i = 0; i < 12; i++) all.push((await testA().create(input({ contactEmail: `p${i}@a.test`, employees: i % 3 ? i * 7 : null }))).id);
      const walk = async (sort: string, afterFirstPage?: () => Promise<void>) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await testA().list({ limit: 5, sort, cursor });
          expect(page.data.length).toBeLessThanOrEqual(5);
          seen.push(...page.data.map((l) => l.id));
          cursor = page.nextCursor ?? undefined;
          expect(page.hasMore).toBe(cursor !== undefined);
          if (pages === 0) await afterFirstPage?.();
          pages += 1;
        } while (cursor && pages < 20);
        expect(new Set(seen).size).toBe(seen.length); // no row twice
        return seen;
      };
      const insert = async (email: string) => {
        all.push((await testA().create(input({ contactEmail: email }))).id);
      };

      // Newest first: a row inserted after page 1 sorts before the cursor and is not seen; every other row is, once.
      const before = [...all];
      expect(await walk('-created_at', () => insert('late-desc@a.test'))).toEqual([...before].reverse());
      // Oldest first: a row inserted after page 1 sorts after every row and is seen at the end.
      const seenAsc = await walk('created_at', () => insert('late-asc@a.test'));
      expect(seenAsc).toEqual(all);
      for (const sort of ['score', '-score', 'company', '-company', 'employees', '-employees']) {
        expect([...(await walk(sort))].sort()).toEqual([...all].sort());
      }
    });

    it('sorts nullable employees with nulls last in both directions', async () => {
      await testA().create(input({ contactEmail: 'n@a.test', employees: null }));
      await testA().create(input({ contactEmail: 's@a.test', employees: 5 }));
      await testA().create(input({ contactEmail: 'l@a.test', employees: 500 }));
      const asc = await testA().list({ sort: 'employees' });
      expect(asc.data.map((l) => l.employees)).toEqual([5, 500, null]);
      const desc = await testA().list({ sort: '-employees' });
      expect(desc.data.map((l) => l.employees)).toEqual([500, 5, null]);
    });

    it('filters by industry, status, score, employees, time and q', async () => {
      const soft = await testA().create(input({ company: 'Initech', contactEmail: 'bill@initech.test', industry: 'Software', employees: 300 }));
      const shop = await testA().create(input({ company: 'Corner Shop', contactEmail: 'owner@gmail.com', industry: 'Retail', employees: 3 }));
      await testA().update(shop.id, patch({ status: LeadStatus.contacted }));
      const ids = async (filter: Parameters<LeadService['list']>[0]) => (await testA().list(filter)).data.map((l) => l.id).sort();
      expect(await ids({ industry: 'software' })).toEqual([soft.id]);
      expect(await ids({ industry: 'soft%' })).toEqual([]); // wildcards are literal
      expect(await ids({ status: LeadStatus.contacted })).toEqual([shop.id]);
      expect(await ids({ minScore: soft.score })).toEqual([soft.id]);
      expect(await ids({ maxScore: shop.score })).toEqual([shop.id]);
      expect(await ids({ scoreLabel: soft.scoreLabel as never })).toEqual([soft.id]);
      expect(await ids({ minEmployees: 10 })).toEqual([soft.id]);
      expect(await ids({ maxEmployees: 10 })).toEqual([shop.id]);
      expect(await ids({ q: 'INITECH' })).toEqual([soft.id]);
      expect(await ids({ q: 'gmail' })).toEqual([shop.id]);
      expect(await ids({ q: '_' })).toEqual([]);
      expect(await ids({ createdAfter: new Date(Date.now() + 60_000) })).toEqual([]);
      expect(await ids({ createdBefore: new Date(Date.now() + 60_000) })).toEqual([soft.id, shop.id].sort());
    });

    it('refuses a bad sort or cursor', async () => {
      expect((await apiError(testA().list({ sort: 'email' }))).param).toBe('sort');
      expect((await apiError(testA().list({ cursor: 'garbage' }))).param).toBe('cursor');
    });
  });

  describe('the tenant filter', () => {
    it('makes an EntityManager that was not scoped unable to read leads', async () => {
      const lead = await testA().create(input({ contactEmail: 'a@acme.test' }));
      const unscoped: EntityManager = orm.em.fork();
      const noTenant = /No arguments provided for filter 'tenant'/;
      await expect(unscoped.find(Lead, {})).rejects.toThrow(noTenant);
      await expect(unscoped.findOne(Lead, { id: lead.id })).rejects.toThrow(noTenant);
      await expect(unscoped.count(Lead, {})).rejects.toThrow(noTenant);
      await expect(unscopedService().get(lead.id)).rejects.toThrow(noTenant);
      await expect(unscopedService().read(lead.id)).rejects.toThrow(noTenant);
      await expect(unscopedService().list()).rejects.toThrow(noTenant);
      // Creating needs the tenant's scoring model first, which the filter refuses as it refuses any read.
      await expect(unscopedService().create(input({ contactEmail: 'b@acme.test' }))).rejects.toThrow(noTenant);
      // Crossing tenants is possible only when a caller says so explicitly.
      expect(await orm.em.fork().count(Lead, {}, { filters: false })).toBe(1);
    });

    it('scopes queries to the account and mode even for conditions naming other accounts', async () => {
      await testB().create(input({ contactEmail: 'b@b.test' }));
      const em = scopeTo(orm.em.fork(), { accountId: accountA.id, livemode: false });
      expect(await em.find(Lead, { account: accountB.id })).toEqual([]);
      expect(await em.find(Lead, { livemode: true })).toEqual([]);
    });
  });
});
