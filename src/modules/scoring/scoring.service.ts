import { EntityManager } from '@mikro-orm/postgresql';
import { findFirstLean, Lean } from '../../db/lean';
import { createScoped } from '../../db/tenant';
import { tenantQuery } from '../../db/tenant-sql';
import { DealStage } from '../deals/deal-stage';
import { Lead } from '../leads/lead.entity';
import type { LeadScorer } from './lead-scorer';
import { LabelledLead, LearnedLeadScorer, MIN_CLOSED_LEADS, trainLeadModel } from './learned-model';
import { LeadModel, ScoringModelInfo } from './lead-model.entity';

/** Trained models never change, so their scorers are shared by every request (bounded, oldest dropped first). */
const scorers = new Map<string, LearnedLeadScorer>();
const MAX_CACHED = 500;

/** The scorer of a stored model, managed or lean (it reads only the id, version and parameters). */
export function scorerFor(model: Pick<LeadModel, 'id' | 'modelVersion' | 'params'>): LearnedLeadScorer {
  let scorer = scorers.get(model.id);
  if (!scorer) {
    scorer = new LearnedLeadScorer(model.modelVersion, model.params);
    if (scorers.size >= MAX_CACHED) scorers.delete(scorers.keys().next().value!);
    scorers.set(model.id, scorer);
  }
  return scorer;
}

/** The lead-score model of one account and mode: which scores now, training, and what dashboards show. */
export class ScoringService {
  constructor(
    private readonly em: EntityManager,
    private readonly prior: LeadScorer,
  ) {}

  /** The newest model, read-only: every lead created or rescored asks for it. */
  async latest(): Promise<Lean<LeadModel> | null> {
    return findFirstLean(this.em, LeadModel, {}, { version: 'desc' });
  }

  /** The newest learned model, or the prior before there is one. */
  async current(): Promise<LeadScorer> {
    const model = await this.latest();
    return model ? scorerFor(model) : this.prior;
  }

  /** Leads with at least one closed deal: won if any of their deals was won. */
  async closedLeads(): Promise<LabelledLead[]> {
    const rows = await tenantQuery<{ lead_id: string; won: boolean }>(
      this.em,
      `select lead_id, bool_or(stage = :won) as won from {deals}
        where lead_id is not null and stage in (:won, :lost)
        group by lead_id order by lead_id`,
      { won: DealStage.closed_won, lost: DealStage.closed_lost },
    );
    const outcome = new Map(rows.map((row) => [row.lead_id, row.won]));
    const leads = outcome.size ? await this.em.find(Lead, { id: { $in: [...outcome.keys()] } }, { orderBy: { id: 'asc' } }) : [];
    return leads.map((lead) => ({ id: lead.id, lead, won: outcome.get(lead.id)! }));
  }

  /** Trains the next version from the closed leads as they are now, and stores it. */
  async train(): Promise<LeadModel> {
    const leads = await this.closedLeads();
    const result = trainLeadModel(leads, this.prior);
    const previous = await this.latest();
    const model = createScoped(this.em, LeadModel, {
      version: (previous?.version ?? 0) + 1,
      params: result.params,
      trainingSize: result.trainingSize,
      holdoutSize: result.holdoutSize,
      won: result.won,
      lost: result.lost,
      auc: result.auc,
      priorAuc: result.priorAuc,
      calibration: result.calibration,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    await this.em.flush();
    return model;
  }

  async info(): Promise<ScoringModelInfo> {
    const [model, closed] = await Promise.all([this.latest(), this.closedLeads()]);
    return {
      modelVersion: model?.modelVersion ?? this.prior.version,
      kind: model ? 'learned' : 'prior',
      trainedAt: model?.createdAt ?? null,
      closedLeads: closed.length,
      closedLeadsNeeded: MIN_CLOSED_LEADS,
      trainingSize: model?.trainingSize ?? null,
      holdoutSize: model?.holdoutSize ?? null,
      won: model?.won ?? null,
      lost: model?.lost ?? null,
      auc: model?.auc ?? null,
      priorAuc: model?.priorAuc ?? null,
      calibration: model?.calibration ?? [],
      weights: model ? model.params.model.weights : null,
    };
  }
}
