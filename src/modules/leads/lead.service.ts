import { isDeepStrictEqual } from 'node:util';
import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { isId } from '../../common/ids';
import { mergeMetadata, metadataSizeProblem } from '../../common/metadata';
import { normalizedText } from '../../common/text';
import { FieldObject } from '../fields/field.entity';
import { fieldConditions } from '../fields/field-filters';
import { applyFieldValues } from '../fields/field-values';
import { checkOwner, ownerCondition } from '../members/ownership';
import { findPage, Page } from '../../common/pagination';
import { findFirstLean, Lean } from '../../db/lean';
import { createScoped } from '../../db/tenant';
import type { EventRecorder } from '../../events/event-recorder';
import type { LeadScorer } from '../scoring/lead-scorer';
import type { ScoringService } from '../scoring/scoring.service';
import { Lead, LeadScoreLabel } from './lead.entity';
import { LeadCreateInput, LeadListInput, LEAD_SORTS, LeadUpdateInput } from './lead.inputs';
import { canMoveLead, LeadStatus } from './lead-status';
import { LeadScore } from './lead.types';

/** Fields the scorer reads: changing one rescores the lead. */
const SCORED_FIELDS = ['company', 'contactEmail', 'contactName', 'industry', 'employees', 'website', 'country', 'source'] as const;

/** E-mail addresses are stored lower-cased, so duplicates are found whatever the case. */
const LEAD_TEXT = { contactEmail: (email: string) => email.toLowerCase() };

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Lead rules. Works on a request's EntityManager, already scoped to one account and mode by the
 * tenant filter, so nothing here names an account.
 */
export class LeadService {
  constructor(
    private readonly em: EntityManager,
    private readonly scoring: ScoringService,
    private readonly events: EventRecorder,
  ) {}

  async create(raw: LeadCreateInput): Promise<Lead> {
    const input = normalizedText(raw, LEAD_TEXT);
    await checkOwner(this.em, input.ownerId);
    const fieldValues = await applyFieldValues(this.em, FieldObject.lead, {}, input.fields, true);
    const scorer = await this.scoring.current();
    const lead = createScoped(
      this.em,
      Lead,
      {
        company: input.company,
        contactEmail: input.contactEmail,
        contactName: input.contactName ?? null,
        industry: input.industry ?? null,
        employees: input.employees ?? null,
        website: input.website ?? null,
        country: input.country ?? null,
        source: input.source ?? null,
        status: input.status ?? LeadStatus.new,
        ownerId: input.ownerId ?? null,
        metadata: input.metadata ?? {},
        fields: fieldValues,
        ...scoreFields(scorer, input),
      },
      { persist: false },
    );
    await this.events.insertWith(lead, ['lead.created', 'lead.scored']);
    return lead;
  }

  /** The lead, managed: for changes. */
  async get(id: string): Promise<Lead> {
    const lead = isId('lead', id) ? await this.em.findOne(Lead, { id }) : null;
    if (!lead) throw notFound('lead', id);
    return lead;
  }

  /** The lead, read-only (src/db/lean.ts): for answers that only print it; `populate` adds lazy properties. */
  async read(id: string, options: { populate?: Array<'scoreSignals'> } = {}): Promise<Lean<Lead>> {
    const lead = isId('lead', id) ? await findFirstLean(this.em, Lead, { id }, {}, options) : null;
    if (!lead) throw notFound('lead', id);
    return lead;
  }

  async update(id: string, input: LeadUpdateInput): Promise<Lead> {
    const lead = await this.get(id);
    const before = this.events.snapshot(lead);
    const { metadata, status, fields: fieldValues, ...fields } = normalizedText(input, LEAD_TEXT);
    await checkOwner(this.em, fields.ownerId);
    lead.fields = await applyFieldValues(this.em, FieldObject.lead, lead.fields, fieldValues, false);
    if (status !== undefined && !canMoveLead(lead.status, status)) {
      throw new ApiError('invalid_status_transition', `A ${lead.status} lead cannot move to ${status}`, { param: 'status' });
    }
    const current = lead as unknown as Record<string, unknown>;
    // The score is recomputed when a field it reads changes (CONTRACT §5), not when one is resent as it was.
    const rescore = SCORED_FIELDS.some((name) => fields[name] !== undefined && fields[name] !== current[name]);
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) current[name] = value;
    }
    if (status !== undefined) lead.status = status;
    if (metadata !== undefined) {
      const merged = mergeMetadata(lead.metadata, metadata);
      const problem = metadataSizeProblem(merged);
      if (problem) throw new ApiError('parameter_invalid', problem, { param: 'metadata' });
      lead.metadata = merged;
    }
    if (rescore) Object.assign(lead, scoreFields(await this.scoring.current(), lead));
    // Events with `before` are recorded only when something a client sees changed.
    if (this.events.record('lead.updated', lead, before) && rescore) this.events.record('lead.scored', lead, before);
    await this.em.flush();
    return lead;
  }

  async delete(id: string): Promise<string> {
    const lead = await this.get(id);
    this.events.record('lead.deleted', lead);
    this.em.remove(lead);
    await this.em.flush();
    return lead.id;
  }

  async score(id: string): Promise<LeadScore> {
    const lead = await this.read(id, { populate: ['scoreSignals'] });
    return {
      leadId: lead.id,
      score: lead.score,
      scoreLabel: lead.scoreLabel as LeadScoreLabel,
      baseScore: lead.scoreBase,
      modelVersion: lead.modelVersion,
      scoredAt: lead.scoredAt,
      signals: lead.scoreSignals,
    };
  }

  async list(input: LeadListInput = {}): Promise<Page<Lean<Lead>>> {
    const conditions: FilterQuery<Lead>[] = await fieldConditions<Lead>(this.em, FieldObject.lead, input.fields);
    if (input.industry) conditions.push({ industry: { $ilike: escapeLike(input.industry) } });
    if (input.status) conditions.push({ status: input.status });
    if (input.ownerId) conditions.push(ownerCondition<Lead>(input.ownerId));
    if (input.scoreLabel) conditions.push({ scoreLabel: input.scoreLabel });
    if (input.minScore !== undefined && input.minScore !== null) conditions.push({ score: { $gte: input.minScore } });
    if (input.maxScore !== undefined && input.maxScore !== null) conditions.push({ score: { $lte: input.maxScore } });
    if (input.minEmployees !== undefined && input.minEmployees !== null) conditions.push({ employees: { $gte: input.minEmployees } });
    if (input.maxEmployees !== undefined && input.maxEmployees !== null) conditions.push({ employees: { $lte: input.maxEmployees } });
    if (input.createdAfter) conditions.push({ createdAt: { $gte: input.createdAfter } });
    if (input.createdBefore) conditions.push({ createdAt: { $lt: input.createdBefore } });
    if (input.q) {
      const pattern = `%${escapeLike(input.q)}%`;
      conditions.push({ $or: [{ company: { $ilike: pattern } }, { contactEmail: { $ilike: pattern } }] });
    }
    return findPage(this.em, Lead, conditions, input, LEAD_SORTS, { lean: true });
  }

  /**
   * Rescores the next `batchSize` leads after `afterId`, in id order, with `scorer` (after a new
   * model is trained), recording lead.scored for each lead whose score, label, signals or model
   * changed. Run it in a transaction so a batch and its events commit together.
   */
  async rescoreBatch(scorer: LeadScorer, afterId: string, batchSize: number): Promise<{ changed: number; through: string | null; done: boolean }> {
    const batch = await this.em.find(Lead, { id: { $gt: afterId } }, { orderBy: { id: 'asc' }, limit: batchSize, populate: ['scoreSignals'] });
    let changed = 0;
    for (const lead of batch) {
      const before = this.events.snapshot(lead);
      const fields = scoreFields(scorer, lead);
      if (lead.modelVersion === fields.modelVersion && lead.score === fields.score && isDeepStrictEqual(lead.scoreSignals, fields.scoreSignals)) continue;
      Object.assign(lead, fields);
      this.events.record('lead.scored', lead, before);
      changed += 1;
    }
    await this.em.flush();
    return { changed, through: batch.length > 0 ? batch[batch.length - 1].id : null, done: batch.length < batchSize };
  }
}

function scoreFields(scorer: LeadScorer, lead: Parameters<LeadScorer['score']>[0]) {
  const result = scorer.score(lead);
  return {
    score: result.score,
    scoreLabel: result.label,
    scoreSignals: result.signals,
    scoreBase: result.baseScore,
    modelVersion: result.modelVersion,
    scoredAt: new Date(),
  };
}
