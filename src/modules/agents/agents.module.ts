import { defineModule } from '../module';
import { agentFanOut } from './agent-fan-out';
import { AgentRunner, AgentRunnerOptions } from './agent-runner';
import { Agent, AgentFollowUp, AgentRun, AgentTask, AgentVersion } from './agent.entity';
import { AgentResolver } from './agent.resolver';
import { AgentService } from './agent.service';
import { AgentSimulationService } from './agent-simulation';
import { AgentSuggestion } from './agent-suggestion.entity';
import { SuggestionResolver } from './suggestion.resolver';
import { SuggestionService } from './suggestion.service';

const AGENT_EVENTS = [
  'agent.deployed',
  'agent.paused',
  'agent.resumed',
  'agent.deleted',
  'agent.action',
  'agent.suggestion_created',
  'agent.suggestion_approved',
  'agent.suggestion_rejected',
] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof AGENT_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    agents: AgentService;
    suggestions: SuggestionService;
    agentSimulations: AgentSimulationService;
  }
}

export const agentsModule = defineModule({
  name: 'agents',
  entities: [Agent, AgentVersion, AgentRun, AgentTask, AgentFollowUp, AgentSuggestion],
  events: AGENT_EVENTS,
  resolvers: [AgentResolver, SuggestionResolver],
  routes: [
    { method: 'GET', path: '/v1/agents', summary: 'List AI agents', operation: { type: 'query', field: 'agents', query: 'filter' } },
    {
      method: 'POST',
      path: '/v1/agents',
      summary: 'Create and configure an agent',
      operation: { type: 'mutation', field: 'createAgent', body: 'input' },
      status: 201,
    },
    { method: 'GET', path: '/v1/agents/:id', summary: 'Retrieve an agent', operation: { type: 'query', field: 'agent' } },
    {
      method: 'DELETE',
      path: '/v1/agents/:id',
      summary: 'Delete an agent that is not deployed',
      operation: { type: 'mutation', field: 'deleteAgent' },
      errors: ['resource_conflict'],
    },
    {
      method: 'POST',
      path: '/v1/agents/:id/deploy',
      summary: 'Deploy an agent to production (or an earlier version again)',
      operation: { type: 'mutation', field: 'deployAgent', body: 'input' },
      errors: ['agent_config_invalid'],
    },
    {
      method: 'POST',
      path: '/v1/agents/:id/pause',
      summary: 'Pause a deployed agent',
      operation: { type: 'mutation', field: 'pauseAgent' },
      errors: ['resource_conflict'],
    },
    {
      method: 'POST',
      path: '/v1/agents/:id/resume',
      summary: 'Resume a paused agent',
      operation: { type: 'mutation', field: 'resumeAgent' },
      errors: ['resource_conflict'],
    },
    {
      method: 'GET',
      path: '/v1/agents/:id/metrics',
      summary: 'Agent performance metrics',
      operation: { type: 'query', field: 'agentMetrics', query: 'filter' },
    },
    {
      method: 'POST',
      path: '/v1/agents/:id/simulate',
      summary: "Simulate a config over a window's recorded events, without side effects",
      operation: { type: 'mutation', field: 'simulateAgent', body: 'input' },
      errors: ['agent_config_invalid'],
    },
    {
      method: 'GET',
      path: '/v1/agents/:id/suggestions',
      summary: "List an agent's suggestions",
      operation: { type: 'query', field: 'agentSuggestions', query: 'filter' },
    },
    { method: 'GET', path: '/v1/suggestions/:id', summary: 'Retrieve a suggestion', operation: { type: 'query', field: 'suggestion' } },
    {
      method: 'POST',
      path: '/v1/suggestions/:id/approve',
      summary: 'Approve a suggestion (optionally edited) and perform it',
      operation: { type: 'mutation', field: 'approveSuggestion', body: 'input' },
      errors: ['resource_conflict'],
    },
    {
      method: 'POST',
      path: '/v1/suggestions/:id/reject',
      summary: 'Reject a suggestion',
      operation: { type: 'mutation', field: 'rejectSuggestion' },
      errors: ['resource_conflict'],
    },
  ],
  fanOuts: () => [agentFanOut],
  workers: {
    agents: ({ orm, logger, servicesFor, metrics, consumers }, overrides?: Partial<AgentRunnerOptions>) =>
      new AgentRunner({ orm, logger: logger.child({ component: 'agents' }), servicesFor, metrics, consumers, ...overrides }),
  },
  services: {
    agents: ({ em, events }) => new AgentService(em, events),
    suggestions: ({ em, events }) => new SuggestionService(em, events),
    agentSimulations: ({ em, services, servicesFor }) => new AgentSimulationService(em, services, servicesFor),
  },
});
