import { defineModule } from '../module';
import { Agent, AgentFollowUp, AgentRun, AgentTask, AgentVersion } from './agent.entity';
import { AgentResolver } from './agent.resolver';
import { AgentService } from './agent.service';

const AGENT_EVENTS = ['agent.deployed', 'agent.paused', 'agent.resumed', 'agent.deleted', 'agent.action'] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof AGENT_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    agents: AgentService;
  }
}

export const agentsModule = defineModule({
  name: 'agents',
  entities: [Agent, AgentVersion, AgentRun, AgentTask, AgentFollowUp],
  events: AGENT_EVENTS,
  resolvers: [AgentResolver],
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
  ],
  services: { agents: ({ em, events }) => new AgentService(em, events) },
});
