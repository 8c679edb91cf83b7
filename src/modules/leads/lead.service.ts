import { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/errors';
import { isId } from '../../common/ids';
import { mergeMetadata, metadataSizeProblem } from '../../common/metadata';
import { normalizedText } from '../../common/text';
import { afterCursor, DEFAULT_PAGE_SIZE, orderByFor, Page, parseSort, SortableField, toPage } from '../../common/pagination';
import { createScoped } from '../../db/tenant';
import { LeadScorer } from '../scoring/lead-scorer';
import { Lead, LeadScoreLabel } from './lead.entity';
import { LeadCreateInput, LeadListInput, LeadUpdateInput } from './lead.inputs';
import { canMoveLead, LeadStatus } from './lead-status';
import { LeadScore } from './lead.types';

const SORTABLE: Record<string, SortableField> = {
  created_at: { property: 'createdAt', kind: 'date' },
  score: { property: 'score', kind: 'number' },
  company: { property: 'company', kind: 'string' },
  employees: { property: 'employees', kind: 'number', nullable: true },
};

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
    private readonly scorer: LeadScorer,
  ) {}

  async create(raw: LeadCreateInput): Promise<Lead> {
    const input = normalizedText(raw, LEAD_TEXT);
    const lead = createScoped(this.em, Lead, {
      company: input.company,
      contactEmail: input.contactEmail,
      contactName: input.contactName ?? null,
      industry: input.industry ?? null,
      employees: input.employees ?? null,
      website: input.website ?? null,
      country: input.country ?? null,
      source: input.source ?? null,
      status: input.status ?? LeadStatus.new,
      metadata: input.metadata ?? {},
      ...this.scoreFields(input),
    });
    await this.em.flush();
    return lead;
  }

  async get(id: string): Promise<Lead> {
    const lead = isId('lead', id) ? await this.em.findOne(Lead, { id }) : null;
    if (!lead) throw notFound('lead', id);
    return lead;
  }

  async update(id: string, input: LeadUpdateInput): Promise<Lead> {
    const lead = await this.get(id);
    const { metadata, status, ...fields } = normalizedText(input, LEAD_TEXT);
    if (status !== undefined && !canMoveLead(lead.status, status)) {
      throw new ApiError('invalid_status_transition', `A ${lead.status} lead cannot move to ${status}`, { param: 'status' });
    }
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined) (lead as unknown as Record<string, unknown>)[name] = value;
    }
    if (status !== undefined) lead.status = status;
    if (metadata !== undefined) {
      const merged = mergeMetadata(lead.metadata, metadata);
      const problem = metadataSizeProblem(merged);
      if (problem) throw new ApiError('parameter_invalid', problem, { param: 'metadata' });
      lead.metadata = merged;
    }
    if (SCORED_FIELDS.some((name) => fields[name as keyof typeof fields] !== undefined)) {
      Object.assign(lead, this.scoreFields(lead));
    }
    await this.em.flush();
    return lead;
  }

  async delete(id: string): Promise<string> {
    const lead = await this.get(id);
    this.em.remove(lead);
    await this.em.flush();
    return lead.id;
  }

  async score(id: string): Promise<LeadScore> {
    const lead = await this.get(id);
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

  async list(input: LeadListInput = {}): Promise<Page<Lead>> {
    const limit = input.limit ?? DEFAULT_PAGE_SIZE;
    const sort = parseSort(input.sort, SORTABLE, '-created_at');
    const conditions: FilterQuery<Lead>[] = [];
    if (input.industry) conditions.push({ industry: { $ilike: escapeLike(input.industry) } });
    if (input.status) conditions.push({ status: input.status });
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
    const keyset = afterCursor(sort, input.cursor);
    if (keyset) conditions.push(keyset as FilterQuery<Lead>);
    const rows = await this.em.find(Lead, conditions.length ? { $and: conditions } : {}, {
      orderBy: orderByFor(sort),
      limit: limit + 1,
    });
    return toPage(rows, limit, sort);
  }

  private scoreFields(lead: Parameters<LeadScorer['score']>[0]) {
    const result = this.scorer.score(lead);
    return {
      score: result.score,
      scoreLabel: result.label,
      scoreSignals: result.signals,
      scoreBase: result.baseScore,
      modelVersion: result.modelVersion,
      scoredAt: new Date(),
    };
  }
}
