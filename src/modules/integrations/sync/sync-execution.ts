import type { Knex } from '@mikro-orm/knex';
import { ActorType, actingAs } from '../../../events/acting';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError } from '../../../common/api-error';
import { validInput } from '../../../common/validation';
import { createScoped, tenantOf } from '../../../db/tenant';
import { toApiError } from '../../../common/known-errors';
import type { ConflictMeanings } from '../../../db/database-errors';
import { Deal } from '../../deals/deal.entity';
import { DealCreateInput, DealUpdateInput } from '../../deals/deal.inputs';
import { Lead } from '../../leads/lead.entity';
import { LeadCreateInput, LeadUpdateInput } from '../../leads/lead.inputs';
import type { ServiceFactory, Services } from '../../module';
import type {
  ChangePage,
  CrmClient,
  CrmDealFields,
  CrmLeadFields,
  CrmObjectKind,
  ExternalIds,
  OutboundDeal,
  OutboundLead,
  OutboundRemoval,
  PushOutcome,
  RemoteRecord,
  SyncProvider,
  DeliveryOrder,
} from '../providers/crm-client';
import { pullsFrom } from '../providers/crm-client';
import { DealStage } from '../../deals/deal-stage';
import { DELIVERY_RECORD_KINDS, deliveryOrders, showExternalIds } from './sync-delivery';
import type { Integration } from '../integration.entity';
import { defaultStageMap, StageMap, stageFromCrm } from './stage-map';
import { oweChanges } from './sync-fan-out';
import { changedFields, dealCreate, dealFields, dealUpdate, differsFrom, leadCreate, leadFields, leadUpdate, unmappedStage } from './sync-fields';
import { SyncDirection, SyncFailure, SyncLink, SyncRun } from './sync.entities';

/** The main record of an object, by which inbound records find their link: contact / Lead, deal / Opportunity; a PSA's company and opportunity. */
const MAIN_RECORD: Record<SyncProvider, Record<CrmObjectKind, string>> = {
  hubspot: { lead: 'contact', deal: 'deal' },
  salesforce: { lead: 'Lead', deal: 'Opportunity' },
  connectwise: { lead: 'company', deal: 'opportunity' },
  autotask: { lead: 'company', deal: 'opportunity' },
  halopsa: { lead: 'company', deal: 'opportunity' },
};

/**
 * Objects taken per push step: within every provider's batch limit (HubSpot 100, Salesforce 200),
 * so a step is one upsert call, and the CRM client is not made for a step that sends nothing.
 */
const PUSH_BATCH = 100;

/** What a run has done so far; stored with the run after every batch (its progress). */
export interface RunCounts {
  pushed: number;
  pulled: number;
  failed: number;
  toPush: number;
}

/** What the execution needs from the worker that claimed the run. */
export interface ExecutionHost {
  /** A fresh EntityManager scoped to the run's account and mode (each step commits on its own). */
  fork(): EntityManager;
  servicesFor: ServiceFactory;
  /** The CRM client, opened (made once per run, when first needed). */
  client(): Promise<CrmClient>;
  /** Stores the counts; throws when this instance no longer holds the run (another took it over). */
  progress(counts: RunCounts): Promise<void>;
  /** What the modules' unique constraints mean (a pulled contact whose e-mail a lead has), for the run's failures. */
  conflicts: ConflictMeanings;
}

type Local = Lead | Deal;

/**
 * One sync run's work, step by step, each step committed on its own so a crash loses at most the
 * step under way, and repeating it is harmless (upserts by our id, links by object):
 * 1. push what is owed (leads first, so deals can be associated with their records), batch by batch;
 * 2. pull what changed at the CRM since the cursor, record by record, through the same services as
 *    the API (validated, scoped, with events), skipping our own writes read back and settling a
 *    record changed on both sides by the newer modification time.
 */
export class SyncExecution {
  private readonly provider: SyncProvider;
  private readonly stageMap: StageMap;

  constructor(
    private readonly integration: Integration,
    private readonly run: SyncRun,
    private readonly host: ExecutionHost,
    readonly counts: RunCounts,
  ) {
    this.provider = integration.provider as SyncProvider;
    this.stageMap = integration.settings.stageMap ?? defaultStageMap(this.provider);
  }

  /** Owes the CRM every lead and deal of the account and mode (the backfill of a first run). */
  async oweEverything(): Promise<void> {
    const knex = this.host.fork().getKnex();
    for (const [kind, table] of [
      ['lead', 'leads'],
      ['deal', 'deals'],
    ] as const) {
      await knex.raw(
        `insert into integration_pending_changes (integration_id, object_type, object_id, account_id, livemode, changed_at)
         select ?, ?, id, account_id, livemode, now() from ${table} where account_id = ? and livemode = ?
         on conflict do nothing`,
        [this.integration.id, kind, this.run.account.id, this.run.livemode],
      );
    }
  }

  async push(): Promise<void> {
    this.counts.toPush = await this.owedCount();
    await this.host.progress(this.counts);
    await this.pushKind('lead');
    await this.pushKind('deal');
  }

  /** Nothing from a PSA: it is pushed to only (we are the source of truth for selling, the PSA for delivering). */
  async pull(): Promise<void> {
    if (!pullsFrom(this.provider)) return;
    await this.pullKind('lead');
    await this.pullKind('deal');
  }

  private async owedCount(): Promise<number> {
    const row = await this.host
      .fork()
      .getKnex()('integration_pending_changes')
      .where({ integration_id: this.integration.id })
      .count<{ count: string }[]>('* as count');
    return Number(row[0].count);
  }

  /** Pushes what is owed of one kind, a provider batch at a time, until nothing is owed. */
  private async pushKind(kind: CrmObjectKind): Promise<void> {
    for (;;) {
      const em = this.host.fork();
      const owed: Array<{ object_id: string; changed_at: Date }> = await em
        .getKnex()('integration_pending_changes')
        .select('object_id', 'changed_at')
        .where({ integration_id: this.integration.id, object_type: kind })
        .orderBy('changed_at')
        .limit(PUSH_BATCH);
      if (owed.length === 0) return;
      await this.pushBatch(em, kind, owed);
      this.counts.toPush = await this.owedCount();
      await this.host.progress(this.counts);
    }
  }

  private async pushBatch(em: EntityManager, kind: CrmObjectKind, owed: Array<{ object_id: string; changed_at: Date }>): Promise<void> {
    const ids = owed.map((row) => row.object_id);
    const [objects, links] = await Promise.all([
      kind === 'lead' ? em.find(Lead, { id: { $in: ids } }) : em.find(Deal, { id: { $in: ids } }),
      em.find(SyncLink, { integration: this.integration.id, objectType: kind, objectId: { $in: ids } }),
    ]);
    const objectById = new Map<string, Local>(objects.map((object) => [object.id, object]));
    const linkById = new Map(links.map((link) => [link.objectId, link]));
    const upserts: Array<{ id: string; fields: CrmLeadFields | CrmDealFields; external: ExternalIds }> = [];
    const removals: OutboundRemoval[] = [];
    for (const id of ids) {
      const object = objectById.get(id);
      const link = linkById.get(id);
      if (!object) {
        if (link) removals.push({ id, external: link.external });
        continue;
      }
      const fields = kind === 'lead' ? leadFields(object as Lead) : dealFields(object as Deal, this.stageMap);
      // The CRM already holds these values: nothing to send (our own pull applied, or a change undone),
      // unless a won deal's delivery record is still to be made at a PSA.
      if (link && !differsFrom(this.comparable(fields), link.fields) && !(await this.deliveryOwed(em, kind, object, link.external))) continue;
      upserts.push({ id, fields, external: link?.external ?? {} });
    }
    const outcomes: PushOutcome[] = [];
    if (upserts.length || removals.length) {
      const client = await this.host.client();
      if (upserts.length) {
        outcomes.push(
          ...(kind === 'lead'
            ? await client.upsertLeads(upserts as OutboundLead[])
            : await client.upsertDeals(await this.withLeads(em, upserts as Array<Omit<OutboundDeal, 'lead'>>, objectById))),
        );
      }
      if (removals.length) outcomes.push(...(kind === 'lead' ? await client.archiveLeads(removals) : await client.archiveDeals(removals)));
    }
    const fieldsById = new Map(upserts.map((upsert) => [upsert.id, upsert.fields]));
    const dealIds: string[] = [];
    await em.transactional(async () => {
      const knex = em.getKnex();
      const trx = em.getTransactionContext();
      for (const outcome of outcomes) {
        if (outcome.error) {
          this.fail(em, SyncDirection.push, kind, outcome.id, linkById.get(outcome.id)?.externalId ?? null, outcome.error);
          continue;
        }
        this.counts.pushed += 1;
        const fields = fieldsById.get(outcome.id);
        if (!fields) {
          // Archived at the CRM: the link goes with it.
          await knex('integration_links').transacting(trx).where({ integration_id: this.integration.id, object_type: kind, object_id: outcome.id }).delete();
          continue;
        }
        const external = { ...linkById.get(outcome.id)?.external, ...outcome.external };
        this.link(em, kind, outcome.id, external, fields, linkById.get(outcome.id));
        if (kind === 'deal') dealIds.push(outcome.id);
      }
      await em.flush();
      await showExternalIds(knex, trx, dealIds);
      // Done, unless it changed again meanwhile: then it stays owed, for the next batch.
      for (const row of owed) {
        await knex('integration_pending_changes')
          .transacting(trx)
          .where({ integration_id: this.integration.id, object_type: kind, object_id: row.object_id, changed_at: row.changed_at })
          .delete();
      }
    });
  }

  /**
   * Deals with their lead's records, for the CRM to associate them (when the lead has been pushed),
   * and for a PSA a won deal's delivery order.
   */
  private async withLeads(em: EntityManager, deals: Array<Omit<OutboundDeal, 'lead'>>, objects: Map<string, Local>): Promise<OutboundDeal[]> {
    const leadIds = [...new Set(deals.map((deal) => (objects.get(deal.id) as Deal).lead?.id).filter((id): id is string => !!id))];
    const links = leadIds.length ? await em.find(SyncLink, { integration: this.integration.id, objectType: 'lead', objectId: { $in: leadIds } }) : [];
    const byLead = new Map(links.map((link) => [link.objectId, link]));
    const deliveries = pullsFrom(this.provider)
      ? new Map<string, DeliveryOrder>()
      : await deliveryOrders(
          em,
          deals.map((deal) => objects.get(deal.id) as Deal),
        );
    return deals.map((deal) => {
      const leadId = (objects.get(deal.id) as Deal).lead?.id;
      const link = leadId ? byLead.get(leadId) : undefined;
      return { ...deal, lead: leadId && link ? { id: leadId, external: link.external } : null, delivery: deliveries.get(deal.id) ?? null };
    });
  }

  /** A won deal pushed to a PSA before it had a proposal, whose delivery record can be made now. */
  private async deliveryOwed(em: EntityManager, kind: CrmObjectKind, object: Local, external: ExternalIds): Promise<boolean> {
    if (kind !== 'deal' || pullsFrom(this.provider) || (object as Deal).stage !== DealStage.closed_won) return false;
    if (Object.keys(external).some((record) => DELIVERY_RECORD_KINDS.has(record))) return false;
    return (await deliveryOrders(em, [object as Deal])).size > 0;
  }

  /** The link of an object to its records, made or brought up to date (flushed by the caller). */
  private link(
    em: EntityManager,
    kind: CrmObjectKind,
    objectId: string,
    external: ExternalIds,
    fields: object,
    existing?: SyncLink | null,
    remoteModifiedAt?: Date,
  ) {
    const main = external[MAIN_RECORD[this.provider][kind]];
    if (!main) throw new Error(`the ${this.provider} client answered no ${MAIN_RECORD[this.provider][kind]} id for ${objectId}`);
    const values = { externalId: main, external, fields: this.comparable(fields), syncedAt: new Date(), ...(remoteModifiedAt ? { remoteModifiedAt } : {}) };
    if (existing) {
      em.assign(existing, values);
      em.persist(existing);
      return;
    }
    createScoped(em, SyncLink, { integration: this.integration.id, objectType: kind, objectId, ...values });
  }

  private fail(em: EntityManager, direction: SyncDirection, kind: CrmObjectKind, objectId: string | null, externalId: string | null, message: string): void {
    this.counts.failed += 1;
    createScoped(em, SyncFailure, { run: this.run.id, direction, objectType: kind, objectId, externalId, message: message.slice(0, 1000) });
  }

  /** Applies the CRM's changes of one kind since the cursor, page by page; the cursor moves once a page is applied. */
  private async pullKind(kind: CrmObjectKind): Promise<void> {
    const client = await this.host.client();
    let cursor = this.integration.syncCursors[kind] ?? null;
    for (;;) {
      const page: ChangePage<RemoteRecord<CrmLeadFields | CrmDealFields>> =
        kind === 'lead' ? await client.changedLeads(cursor) : await client.changedDeals(cursor);
      for (const record of page.records) await this.apply(kind, record);
      const moved = page.cursor !== null && page.cursor !== cursor;
      if (moved) {
        cursor = page.cursor;
        this.integration.syncCursors = { ...this.integration.syncCursors, [kind]: cursor };
        await this.host
          .fork()
          .getKnex()('integrations')
          .where({ id: this.integration.id })
          .update({ sync_cursors: JSON.stringify(this.integration.syncCursors) });
      }
      await this.host.progress(this.counts);
      if (!page.more || !moved) return;
    }
  }

  /** One record from the CRM, in its own transaction: created or updated here, or skipped, or recorded as a failure. */
  private async apply(kind: CrmObjectKind, record: RemoteRecord<CrmLeadFields | CrmDealFields>): Promise<void> {
    const mainId = record.external[MAIN_RECORD[this.provider][kind]] ?? null;
    const em = this.host.fork();
    try {
      await em.transactional(async () => {
        const services = this.host.servicesFor(em, actingAs(ActorType.sync, this.integration.id));
        let link = mainId ? await em.findOne(SyncLink, { integration: this.integration.id, objectType: kind, externalId: mainId }) : null;
        // One of ours whose link was lost (or made by a run that crashed before linking): adopt it.
        if (!link && record.ourId) link = await em.findOne(SyncLink, { integration: this.integration.id, objectType: kind, objectId: record.ourId });
        const localId = link?.objectId ?? record.ourId;
        let local = localId ? await this.findLocal(em, kind, localId) : null;
        const email = (record.fields as Partial<CrmLeadFields>).contactEmail;
        if (!localId && kind === 'lead' && email) {
          // Already a lead of ours by e-mail (on both sides before they were connected): linked, not made twice.
          local = await em.findOne(Lead, { contactEmail: email.toLowerCase() });
          if (local && (await em.count(SyncLink, { integration: this.integration.id, objectType: kind, objectId: local.id }))) local = null;
        }
        if (!local) {
          // Ours once and deleted here since: its archive at the CRM is owed, not a new object.
          if (localId) return;
          await this.createFromCrm(em, services, kind, record);
          return;
        }
        const agreed = link?.fields ?? {};
        // Compared as the two sides mean them (a CRM stage as the stage of ours it maps to); applied as the CRM holds them.
        const changedNames = Object.keys(changedFields(this.comparable(record.fields), agreed));
        const changed = Object.fromEntries(changedNames.map((name) => [name, (record.fields as Record<string, unknown>)[name]])) as Partial<
          CrmLeadFields | CrmDealFields
        >;
        if (Object.keys(changed).length === 0) {
          // Our own write read back, or a change to a field we do not sync.
          if (!link) this.link(em, kind, local.id, record.external, record.fields, null, record.modifiedAt);
          await em.flush();
          return;
        }
        const ours = this.fieldsOf(kind, local);
        // Changed on both sides since they last agreed: the newer modification wins. Ours is pushed, from the CRM's values as agreed.
        if (differsFrom(this.comparable(ours), agreed) && local.updatedAt.getTime() >= record.modifiedAt.getTime()) {
          if (!link) this.link(em, kind, local.id, record.external, record.fields, null, record.modifiedAt);
          await em.flush();
          const { accountId, livemode } = tenantOf(em);
          await oweChanges(em.getTransactionContext<Knex.Transaction>()!, [
            { integration_id: this.integration.id, object_type: kind, object_id: local.id, account_id: accountId, livemode, changed_at: new Date() },
          ]);
          return;
        }
        if (kind === 'deal') {
          const problem = unmappedStage(changed as Partial<CrmDealFields>, this.stageMap, this.provider);
          if (problem) throw new ApiError('parameter_invalid', problem, { param: 'stage' });
        }
        const updated =
          kind === 'lead'
            ? await services.leads.update(local.id, await validInput(LeadUpdateInput, leadUpdate(changed as Partial<CrmLeadFields>)))
            : await services.deals.update(
                local.id,
                await validInput(DealUpdateInput, dealUpdate(changed as Partial<CrmDealFields>, this.stageMap, this.provider)),
              );
        this.link(em, kind, local.id, { ...link?.external, ...record.external }, this.fieldsOf(kind, updated), link, record.modifiedAt);
        await em.flush();
        if (kind === 'deal') await showExternalIds(em.getKnex(), em.getTransactionContext(), [local.id]);
        this.counts.pulled += 1;
      });
    } catch (error) {
      const known = toApiError(error, this.host.conflicts);
      if (!known) throw error;
      // The record cannot become one of ours as it is (a contact without an e-mail, a stage not mapped): kept, and the run goes on.
      const failure = this.host.fork();
      this.fail(failure, SyncDirection.pull, kind, record.ourId, mainId, `${known.errorCode}: ${known.message}`);
      await failure.flush();
    }
  }

  private async createFromCrm(em: EntityManager, services: Services, kind: CrmObjectKind, record: RemoteRecord<CrmLeadFields | CrmDealFields>): Promise<void> {
    let created: Local;
    if (kind === 'lead') {
      created = await services.leads.create(await validInput(LeadCreateInput, leadCreate(record.fields as Partial<CrmLeadFields>)));
    } else {
      const problem = unmappedStage(record.fields as Partial<CrmDealFields>, this.stageMap, this.provider);
      if (problem) throw new ApiError('parameter_invalid', problem, { param: 'stage' });
      const input = dealCreate(record.fields as Partial<CrmDealFields>, this.stageMap, this.provider);
      const leadExternal = (record as { leadExternal?: ExternalIds }).leadExternal;
      const leadMain = leadExternal?.[MAIN_RECORD[this.provider].lead];
      if (leadMain) {
        const leadLink = await em.findOne(SyncLink, { integration: this.integration.id, objectType: 'lead', externalId: leadMain });
        if (leadLink) input.leadId = leadLink.objectId;
      }
      created = await services.deals.create(await validInput(DealCreateInput, input));
    }
    this.link(em, kind, created.id, record.external, this.fieldsOf(kind, created), null, record.modifiedAt);
    await em.flush();
    if (kind === 'deal') await showExternalIds(em.getKnex(), em.getTransactionContext(), [created.id]);
    this.counts.pulled += 1;
  }

  /**
   * Fields as both sides mean them, for comparing and for the link's agreed values: a CRM stage
   * becomes the stage of ours it maps to, so a CRM stage our map reads as the same stage (HubSpot's
   * `decisionmakerboughtin` for our negotiation) is agreement, not a change to send or apply.
   */
  private comparable(fields: object): Record<string, unknown> {
    const stage = (fields as Partial<CrmDealFields>).stage;
    if (stage === undefined) return { ...fields };
    return { ...fields, stage: stageFromCrm(this.stageMap, this.provider, stage) ?? stage };
  }

  private fieldsOf(kind: CrmObjectKind, local: Local): CrmLeadFields | CrmDealFields {
    return kind === 'lead' ? leadFields(local as Lead) : dealFields(local as Deal, this.stageMap);
  }

  private findLocal(em: EntityManager, kind: CrmObjectKind, id: string): Promise<Local | null> {
    return kind === 'lead' ? em.findOne(Lead, { id }) : em.findOne(Deal, { id });
  }
}
