import { EntityManager, MikroORM, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { CONFLICTS } from '../../src/app/modules';
import { mapDatabaseError } from '../../src/db/database-errors';
import { insertLean } from '../../src/db/lean-insert';
import { createScoped, scopeTo, TenantScope } from '../../src/db/tenant';
import { Event } from '../../src/events/event.entity';
import { AccountService } from '../../src/modules/accounts/account.service';
import { Deal } from '../../src/modules/deals/deal.entity';
import { Lead } from '../../src/modules/leads/lead.entity';
import { LeadStatus } from '../../src/modules/leads/lead-status';
import { truncateAll, workerOrm } from '../helpers/database';

/**
 * insertLean writes new entities without the unit of work. What it stores must be exactly what
 * em.create + flush stores, all rows or none, and inside a request's transaction a refused insert
 * must leave that transaction usable.
 */
describe('insertLean on a real database', () => {
  let orm: MikroORM;
  let scope: TenantScope;

  beforeAll(async () => {
    orm = await workerOrm();
    await truncateAll(orm);
    const account = await new AccountService(orm.em.fork()).create({ name: 'Lean', email: 'lean-insert@lean.test' });
    scope = { accountId: account.id, livemode: true };
  });
  afterAll(() => orm.close());

  const scoped = (): EntityManager => scopeTo(orm.em.fork(), scope);
  const leadData = (email: string) => ({
    company: 'Acme',
    contactEmail: email,
    contactName: null,
    industry: 'software',
    employees: 120,
    website: null,
    country: 'DE',
    source: 'referral',
    status: LeadStatus.contacted,
    score: 64,
    scoreLabel: 'warm' as const,
    scoreSignals: [{ feature: 'industry', value: 'software', contribution: 6 }] as never,
    scoreBase: 40,
    modelVersion: 'prior-v1',
    scoredAt: new Date('2026-11-01T10:00:00.123Z'),
    metadata: { crm_id: '42', 'odd key': 'quote \' and "double"' },
    createdAt: new Date('2026-11-01T10:00:00.123Z'),
    updatedAt: new Date('2026-11-01T10:00:00.123Z'),
  });
  const row = async (table: string, id: string) => {
    const [found] = await orm.em.getConnection().execute(`select * from ${table} where id = ?`, [id]);
    return found as Record<string, unknown> | undefined;
  };
  const withoutId = ({ id: _id, ...rest }: Record<string, unknown>) => rest;

  it('stores a lead and its events exactly as em.create and flush store them', async () => {
    const viaFlush = scoped();
    const flushedLead = createScoped(viaFlush, Lead, leadData('flushed@lean.test'));
    const flushedEvent = createScoped(viaFlush, Event, { type: 'lead.created', data: { object: { id: 'x', n: 1 }, previous_attributes: {} } });
    await viaFlush.flush();

    const lean = scoped();
    const lead = createScoped(lean, Lead, leadData('lean@lean.test'), { persist: false });
    const event = createScoped(lean, Event, { type: 'lead.created', data: { object: { id: 'x', n: 1 }, previous_attributes: {} } }, { persist: false });
    // Instances of the class, its initializers run (createLean), without em.create's tracking.
    expect([lead instanceof Lead, event instanceof Event, lead.id.startsWith('lead_'), event.id.startsWith('evt_')]).toEqual([true, true, true, true]);
    // Made by a subclass (src/db/lean.ts, leanClass), yet its constructor is the entity's, and its
    // fields are plain data of its own, not MikroORM's tracked accessors.
    expect([lead.constructor, event.constructor]).toEqual([Lead, Event]);
    expect(Object.getOwnPropertyDescriptor(lead, 'company')).toEqual({ value: 'Acme', writable: true, enumerable: true, configurable: true });
    await insertLean(lean, [lead, event]);

    const flushedRow = (await row('leads', flushedLead.id))!;
    expect(withoutId((await row('leads', lead.id)) ?? {})).toEqual({ ...withoutId(flushedRow), contact_email: 'lean@lean.test' });
    expect(withoutId((await row('events', event.id)) ?? {})).toEqual({
      ...withoutId((await row('events', flushedEvent.id))!),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Not managed: a later flush of the same EntityManager writes nothing again.
    await lean.flush();
    const [{ count }] = await orm.em.getConnection().execute('select count(*)::int as count from leads where contact_email = ?', ['lean@lean.test']);
    expect(count).toBe(1);
  });

  it('writes every row or none: a refused lead takes its events with it', async () => {
    const em = scoped();
    await insertLean(em, [createScoped(em, Lead, leadData('taken@lean.test'), { persist: false })]);
    const events = [1, 2].map(() => createScoped(em, Event, { type: 'lead.created', data: { object: {}, previous_attributes: {} } }, { persist: false }));
    const failure = await insertLean(em, [createScoped(em, Lead, leadData('taken@lean.test'), { persist: false }), ...events]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UniqueConstraintViolationException);
    expect(mapDatabaseError(failure, CONFLICTS)).toMatchObject({ errorCode: 'resource_conflict', param: 'contactEmail' });
    for (const event of events) expect(await row('events', event.id)).toBeUndefined();
  });

  it('inside a transaction, undoes only the refused insert, and the transaction commits the rest', async () => {
    const em = scoped();
    await insertLean(em, [createScoped(em, Lead, leadData('first@lean.test'), { persist: false })]);
    await em.begin();
    const refused = insertLean(em, [createScoped(em, Lead, leadData('first@lean.test'), { persist: false })]);
    await expect(refused).rejects.toBeInstanceOf(UniqueConstraintViolationException);
    const kept = createScoped(em, Lead, leadData('second@lean.test'), { persist: false });
    await insertLean(em, [kept]);
    expect(await row('leads', kept.id)).toBeUndefined(); // not visible outside before the commit
    await em.commit();
    expect(await row('leads', kept.id)).toMatchObject({ contact_email: 'second@lean.test', account_id: scope.accountId, livemode: true });
  });

  it('writes several rows of one class, and other orders of classes, with their own statements', async () => {
    const em = scoped();
    const events = [1, 2, 3].map((n) => createScoped(em, Event, { type: `test.${n}`, data: { object: { n }, previous_attributes: {} } }, { persist: false }));
    const lead = createScoped(em, Lead, leadData('after-events@lean.test'), { persist: false });
    await insertLean(em, [...events, lead]);
    for (const [n, event] of events.entries())
      expect(await row('events', event.id)).toMatchObject({ type: `test.${n + 1}`, data: { object: { n: n + 1 }, previous_attributes: {} } });
    expect(await row('leads', lead.id)).toMatchObject({ contact_email: 'after-events@lean.test' });
  });

  it('refuses an entity with properties it cannot write, before writing anything', async () => {
    const em = scoped();
    const lead = createScoped(em, Lead, leadData('never@lean.test'), { persist: false });
    const deal = Object.assign(Object.create(Deal.prototype) as Deal, { id: 'deal_x' });
    await expect(insertLean(em, [lead, deal])).rejects.toThrow(/insertLean does not support Deal\.coSell/);
    expect(await row('leads', lead.id)).toBeUndefined();
  });

  it('refuses a property with onCreate, or left undefined over a database default, rather than storing NULL', async () => {
    // No entity has either today; the guard is for the next one. The lead's metadata is changed
    // for this test only (and restored), as a new entity declaring them would have it.
    const em = scoped();
    const prop = orm.getMetadata().get('Lead').properties.source;
    const lead = () => createScoped(em, Lead, { ...leadData(`guard-${Math.random()}@lean.test`), source: undefined }, { persist: false });
    prop.onCreate = () => 'made';
    try {
      await expect(insertLean(em, [lead()])).rejects.toThrow(/cannot run Lead\.source's onCreate/);
    } finally {
      delete prop.onCreate;
    }
    prop.default = 'import';
    try {
      const refused = lead();
      await expect(insertLean(em, [refused])).rejects.toThrow(/NULL over Lead\.source's database default/);
      expect(await row('leads', refused.id)).toBeUndefined();
    } finally {
      delete prop.default;
    }
  });
});
