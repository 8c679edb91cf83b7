import { newId } from '../../src/common/ids';
import { tenantFork } from '../../src/db/tenant';
import { AgentSuggestion, SuggestionKind } from '../../src/modules/agents/agent-suggestion.entity';
import { AgentWriter } from '../../src/modules/agents/agent-writer';
import { leadBrief } from '../../src/modules/agents/agent-writings';
import type { TestAccount, TestApp } from './app';

/**
 * A pending lead_brief suggestion of `agentId` about `leadId`, made by the service a run uses
 * (the template writes it), for tests that need one without running an agent: the fuzz suite's
 * fixture, whose app runs no agent runner.
 */
export async function proposeBrief(app: TestApp, owner: TestAccount, agentId: string, leadId: string, livemode = false): Promise<AgentSuggestion> {
  const em = tenantFork(app.orm.em, { accountId: owner.account.id, livemode });
  const services = app.servicesFor(em);
  const [agent, lead] = await Promise.all([services.agents.get(agentId), services.leads.get(leadId)]);
  const written = await new AgentWriter({ model: null, budget: { limit: 0, spentToday: 0 } }).write(leadBrief(lead));
  const suggestion = services.suggestions.propose({
    agent,
    runId: newId('arun'),
    kind: SuggestionKind.lead_brief,
    leadId: lead.id,
    dealId: null,
    written,
    ttlDays: 7,
    approveAutomatically: false,
    now: new Date(),
  });
  await em.flush();
  return suggestion;
}
