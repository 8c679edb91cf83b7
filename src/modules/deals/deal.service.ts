import { EntityManager, FilterQuery, LockMode, raw, ref } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { isId, newId } from '../../common/ids';
import { mergeMetadata, metadataSizeProblem } from '../../common/metadata';
import { normalizedText } from '../../common/text';
import { findPage, Page } from '../../common/pagination';
import { findFirstLean, Lean } from '../../db/lean';
import { createScoped, tenantOf } from '../../db/tenant';
import type { EventRecorder, Snapshot } from '../../events/event-recorder';
import { IntegrationProvider } from '../integrations/integration.entity';
import type { IntegrationService } from '../integrations/integration.service';
import { Lead } from '../leads/lead.entity';
import { LeadStatus } from '../leads/lead-status';
import { FieldObject } from '../fields/field.entity';
import { fieldConditions } from '../fields/field-filters';
import { applyFieldValues } from '../fields/field-values';
import { checkOwner, ownerCondition } from '../members/ownership';
import { Proposal } from '../proposals/proposal.entity';
import { outboxSignal } from '../../events/outbox.subscriber';
import { coSellProblems } from './co-sell';
import { CoSellSync } from './co-sell-sync.entity';
import { CoSellRegistration, CoSellStatus, Deal, DealStageChange } from './deal.entity';
import { DealCreateInput, DealListInput, DEAL_SORTS, DealUpdateInput } from './deal.inputs';
import { canMoveDeal, DealStage, OPEN_STAGES, STAGE_PROBABILITY } from './deal-stage';
import { CoSellEligibility, PipelineStageSummary } from './deal.types';
import { fromMinorUnits, toMinorUnits } from './money';

const DEAL_TEXT = { currency: (code: string) => code.toUpperCase() };

const STAGE_ORDER = [...OPEN_STAGES, DealStage.closed_won, DealStage.closed_lost];

/** Deal rules: stage moves, history, conversion of won leads, co-sell registration. */
export class DealService {
  constructor(
    private readonly em: EntityManager,
    private readonly integrations: IntegrationService,
    private readonly events: EventRecorder,
  ) {}

  async create(raw: DealCreateInput): Promise<Deal> {
    const input = normalizedText(raw, DEAL_TEXT);
    await checkOwner(this.em, input.ownerId);
    const fieldValues = await applyFieldValues(this.em, FieldObject.deal, {}, input.fields, true);
    const deal = createScoped(this.em, Deal, {
      name: input.name,
      lead: input.leadId ? ref(await this.lead(input.leadId)) : null,
      valueMinor: toMinorUnits(input.value, 'value'),
      currency: input.currency ?? 'USD',
      stage: input.stage ?? DealStage.prospecting,
      expectedCloseDate: input.expectedCloseDate ?? null,
      owner: input.owner ?? null,
      ownerId: input.ownerId ?? null,
      metadata: input.metadata ?? {},
      fields: fieldValues,
    });
    // A deal may be created already won: its lead converts, like on a later move.
    const leadBefore = await this.loadLeadIfWinning(deal);
    this.recordStage(deal, null);
    this.events.record('deal.created', deal);
    this.recordOutcome(deal, undefined, leadBefore);
    await this.em.flush();
    return deal;
  }

  /** The deal, managed: for changes. */
  async get(id: string): Promise<Deal> {
    const deal = isId('deal', id) ? await this.em.findOne(Deal, { id }) : null;
    if (!deal) throw notFound('deal', id);
    return deal;
  }

  /** The deal, read-only (src/db/lean.ts): for answers that only print it. */
  async read(id: string): Promise<Lean<Deal>> {
    const deal = isId('deal', id) ? await findFirstLean(this.em, Deal, { id }) : null;
    if (!deal) throw notFound('deal', id);
    return deal;
  }

  async update(id: string, raw: DealUpdateInput): Promise<Deal> {
    const deal = await this.get(id);
    const before = this.events.snapshot(deal);
    const { metadata, stage, leadId, value, fields: fieldValues, ...fields } = normalizedText(raw, DEAL_TEXT);
    await checkOwner(this.em, fields.ownerId);
    deal.fields = await applyFieldValues(this.em, FieldObject.deal, deal.fields, fieldValues, false);
    for (const [name, fieldValue] of Object.entries(fields)) {
      if (fieldValue !== undefined) (deal as unknown as Record<string, unknown>)[name] = fieldValue;
    }
    if (value !== undefined) deal.valueMinor = toMinorUnits(value, 'value');
    if (leadId !== undefined) deal.lead = leadId === null ? null : ref(await this.lead(leadId));
    if (metadata !== undefined) {
      const merged = mergeMetadata(deal.metadata, metadata);
      const problem = metadataSizeProblem(merged);
      if (problem) throw new ApiError('parameter_invalid', problem, { param: 'metadata' });
      deal.metadata = merged;
    }
    let leadBefore: Snapshot | undefined;
    const moved = stage !== undefined && stage !== deal.stage;
    if (moved) {
      if (!canMoveDeal(deal.stage, stage)) {
        throw new ApiError('invalid_stage_transition', `A ${deal.stage} deal is closed and cannot move to ${stage}`, { param: 'stage' });
      }
      const from = deal.stage;
      deal.stage = stage;
      leadBefore = await this.loadLeadIfWinning(deal);
      this.recordStage(deal, from);
    }
    if (this.events.record('deal.updated', deal, before) && moved) {
      this.events.record('deal.stage_changed', deal, before);
      this.recordOutcome(deal, before, leadBefore);
    }
    await this.em.flush();
    return deal;
  }

  /**
   * Deletes the deal with its stage history. A proposal is a document issued to a customer and
   * freezes the deal, so a deal with one is kept (409). The deal row is locked for the check and
   * the delete: a proposal generated meanwhile either commits first (and is seen here) or waits
   * for the delete and then finds no deal.
   */
  async delete(id: string): Promise<string> {
    await this.get(id); // 404 before anything else
    return this.em.transactional(async () => {
      const deal = await this.em.findOneOrFail(Deal, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const proposals = await this.em.count(Proposal, { deal: deal.id });
      if (proposals > 0) {
        throw new ApiError(
          'resource_conflict',
          `Deal ${deal.id} has ${proposals === 1 ? 'a proposal' : `${proposals} proposals`} and cannot be deleted: proposals are issued documents that keep their deal`,
        );
      }
      this.events.record('deal.deleted', deal);
      this.em.remove(deal);
      return deal.id;
    });
  }

  async list(input: DealListInput = {}): Promise<Page<Lean<Deal>>> {
    const conditions: FilterQuery<Deal>[] = await fieldConditions<Deal>(this.em, FieldObject.deal, input.fields);
    if (input.stage?.length) conditions.push({ stage: { $in: input.stage } });
    if (input.leadId) conditions.push({ lead: input.leadId });
    if (input.ownerId) conditions.push(ownerCondition<Deal>(input.ownerId));
    if (input.minValue !== undefined && input.minValue !== null) conditions.push({ valueMinor: { $gte: toMinorUnits(input.minValue, 'minValue') } });
    if (input.maxValue !== undefined && input.maxValue !== null) conditions.push({ valueMinor: { $lte: toMinorUnits(input.maxValue, 'maxValue') } });
    if (input.coSellStatus) conditions.push({ coSell: { status: input.coSellStatus } });
    return findPage(this.em, Deal, conditions, input, DEAL_SORTS, { lean: true });
  }

  async history(deal: Deal): Promise<DealStageChange[]> {
    return this.em.find(DealStageChange, { deal: deal.id }, { orderBy: { changedAt: 'asc', id: 'asc' } });
  }

  /** Count, total and weighted value per stage and currency, in pipeline order. */
  async pipelineSummary(): Promise<PipelineStageSummary[]> {
    const qb = this.em
      .createQueryBuilder(Deal)
      .select(['stage', 'currency', raw('count(*)::int as count'), raw('sum(value_minor)::text as total')])
      .groupBy(['stage', 'currency']);
    await qb.applyFilters(); // the same tenant filter as every other query
    const rows = await qb.execute<Array<{ stage: DealStage; currency: string; count: number; total: string }>>('all', false);
    return rows
      .map((row) => {
        const total = Number(row.total);
        const probability = STAGE_PROBABILITY[row.stage];
        return {
          stage: row.stage,
          currency: row.currency,
          count: row.count,
          totalValue: fromMinorUnits(total),
          weightedValue: fromMinorUnits(Math.round((total * probability) / 100)),
          probability,
        };
      })
      .sort((a, b) => STAGE_ORDER.indexOf(a.stage) - STAGE_ORDER.indexOf(b.stage) || a.currency.localeCompare(b.currency));
  }

  /**
   * Registers the deal for co-sell (CONTRACT §6), reporting every failed rule at once (422). The deal row is
   * locked for the check and the write, so of two concurrent requests exactly one registers and the other gets
   * 409. Test mode accepts at once; a live registration answers `submitted` and, in the same transaction, owes a
   * CoSellSync that co-sell-worker.ts takes to Partner Center in the background.
   */
  async register(id: string): Promise<Deal> {
    await this.get(id); // 404 before anything else
    const { livemode } = tenantOf(this.em);
    const deal = await this.em.transactional(async () => {
      const deal = await this.em.findOneOrFail(Deal, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (deal.coSell) throw new ApiError('already_registered', `Deal ${deal.id} is already registered for co-sell (${deal.coSell.id})`);
      const { problems, integration } = await this.coSellCheck(deal);
      if (problems.length) {
        throw new ApiError('deal_not_eligible', `The deal is not eligible for co-sell: ${problems.map((p) => p.message).join('; ')}`, {
          details: { reasons: problems },
        });
      }
      const before = this.events.snapshot(deal);
      const now = new Date();
      deal.coSell = Object.assign(new CoSellRegistration(), {
        id: newId('cosell'),
        status: livemode ? CoSellStatus.submitted : CoSellStatus.accepted,
        submittedAt: now,
        decidedAt: livemode ? null : now,
        integrationId: integration!.id,
        referralId: null,
        statusReason: null,
      });
      if (livemode) createScoped(this.em, CoSellSync, { id: deal.coSell.id, deal, integrationId: integration!.id, dueAt: now });
      this.events.record('deal.updated', deal, before);
      this.events.record('deal.registered', deal, before);
      return deal;
    });
    // The worker looks now rather than at its next poll (inside a request's own transaction, the poll finds it once committed).
    if (livemode) outboxSignal.emit('work');
    return deal;
  }

  /** What registering now would answer, without registering: every rule the deal fails (GET …/co_sell_eligibility). */
  async coSellEligibility(id: string): Promise<CoSellEligibility> {
    const deal = await this.get(id);
    const { problems } = await this.coSellCheck(deal);
    return Object.assign(new CoSellEligibility(), { dealId: deal.id, eligible: problems.length === 0, reasons: problems, registered: !!deal.coSell });
  }

  /**
   * The facts the co-sell rules judge, read once for the check and the registration alike, and the
   * integration the registration goes through: microsoft365 in test mode, partner_center in live mode.
   */
  private async coSellCheck(deal: Deal) {
    const { livemode } = tenantOf(this.em);
    const lead = deal.lead ? await this.em.findOne(Lead, { id: deal.lead.id }) : null;
    const integration = await this.integrations.connectedIntegration(livemode ? IntegrationProvider.partner_center : IntegrationProvider.microsoft365);
    const problems = coSellProblems({
      stage: deal.stage,
      valueMinor: deal.valueMinor,
      lead,
      livemode,
      m365Connected: !livemode && integration !== null,
      partnerCenterConnected: livemode && integration !== null,
      expectedCloseDate: deal.expectedCloseDate,
    });
    return { integration, problems };
  }

  private async lead(id: string): Promise<Lead> {
    const lead = isId('lead', id) ? await this.em.findOne(Lead, { id }) : null;
    if (!lead) throw new ApiError('resource_missing', `No such lead: '${id}'`, { param: 'leadId' });
    return lead;
  }

  /** A deal entering closed_won converts its lead: load the lead and snapshot it for lead.updated. */
  private async loadLeadIfWinning(deal: Deal): Promise<Snapshot | undefined> {
    if (deal.stage !== DealStage.closed_won || !deal.lead) return undefined;
    return this.events.snapshot(await deal.lead.loadOrFail());
  }

  /** deal.won / deal.lost on entering a closed stage, and lead.updated for a lead the win converted. */
  private recordOutcome(deal: Deal, before: Snapshot | undefined, leadBefore: Snapshot | undefined): void {
    if (deal.stage === DealStage.closed_won) this.events.record('deal.won', deal, before);
    if (deal.stage === DealStage.closed_lost) this.events.record('deal.lost', deal, before);
    if (leadBefore && deal.lead) this.events.record('lead.updated', deal.lead.getEntity(), leadBefore);
  }

  /** Records a stage entered (from null at creation); a won deal converts its lead. */
  private recordStage(deal: Deal, from: DealStage | null): void {
    deal.stageChangedAt = new Date();
    createScoped(this.em, DealStageChange, { deal, fromStage: from, toStage: deal.stage, changedAt: deal.stageChangedAt });
    if (deal.stage === DealStage.closed_won && deal.lead) {
      const lead = deal.lead.getEntity();
      lead.status = LeadStatus.converted;
    }
  }
}
