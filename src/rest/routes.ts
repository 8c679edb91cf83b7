/**
 * The REST API: one row per /v1 route of the spec. A row names the GraphQL root field it runs;
 * path parameters become arguments of the same name, and `body` / `query` name the argument that
 * receives the JSON body or the query string. The adapter builds each operation's document from
 * the schema, so a row never repeats a field list.
 */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  summary: string;
  operation: {
    type: 'query' | 'mutation';
    field: string;
    body?: string;
    query?: string;
  };
  /** Success status; 200 unless said otherwise. */
  status?: number;
  /** The operation answers a FileDownload: send its bytes with Content-Type, Content-Disposition and ETag. */
  file?: boolean;
  /** For routes whose status depends on the answer (health: 503 when degraded). */
  statusFrom?: (data: Record<string, unknown>) => number;
}

export const ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/health',
    summary: 'API status and version',
    operation: { type: 'query', field: 'health' },
    statusFrom: (data) => (data.status === 'ok' ? 200 : 503),
  },
  { method: 'GET', path: '/v1/leads', summary: 'List leads', operation: { type: 'query', field: 'leads', query: 'filter' } },
  { method: 'GET', path: '/v1/leads/:id', summary: 'Retrieve a lead', operation: { type: 'query', field: 'lead' } },
  {
    method: 'POST',
    path: '/v1/leads',
    summary: 'Create a lead',
    operation: { type: 'mutation', field: 'createLead', body: 'input' },
    status: 201,
  },
  { method: 'PUT', path: '/v1/leads/:id', summary: 'Update a lead', operation: { type: 'mutation', field: 'updateLead', body: 'input' } },
  { method: 'DELETE', path: '/v1/leads/:id', summary: 'Delete a lead', operation: { type: 'mutation', field: 'deleteLead' } },
  { method: 'GET', path: '/v1/leads/:id/score', summary: 'Lead score and signals', operation: { type: 'query', field: 'leadScore' } },
  { method: 'GET', path: '/v1/deals', summary: 'List deals', operation: { type: 'query', field: 'deals', query: 'filter' } },
  { method: 'POST', path: '/v1/deals', summary: 'Create a deal', operation: { type: 'mutation', field: 'createDeal', body: 'input' }, status: 201 },
  {
    method: 'PUT',
    path: '/v1/deals/:id',
    summary: 'Update deal stage, value or metadata',
    operation: { type: 'mutation', field: 'updateDeal', body: 'input' },
  },
  {
    method: 'POST',
    path: '/v1/deals/:id/register',
    summary: 'Register a deal for co-sell',
    operation: { type: 'mutation', field: 'registerDeal' },
  },
  {
    method: 'POST',
    path: '/v1/proposals',
    summary: 'Generate a proposal from deal data',
    operation: { type: 'mutation', field: 'createProposal', body: 'input' },
    status: 201,
  },
  { method: 'GET', path: '/v1/proposals/:id', summary: 'Proposal details and PDF URL', operation: { type: 'query', field: 'proposal' } },
  {
    method: 'GET',
    path: '/v1/proposals/:id/pdf',
    summary: 'Download a proposal as PDF',
    operation: { type: 'query', field: 'proposalPdf' },
    file: true,
  },
  { method: 'GET', path: '/v1/agents', summary: 'List AI agents', operation: { type: 'query', field: 'agents', query: 'filter' } },
  {
    method: 'POST',
    path: '/v1/agents',
    summary: 'Create and configure an agent',
    operation: { type: 'mutation', field: 'createAgent', body: 'input' },
    status: 201,
  },
  {
    method: 'POST',
    path: '/v1/agents/:id/deploy',
    summary: 'Deploy an agent to production',
    operation: { type: 'mutation', field: 'deployAgent', body: 'input' },
  },
  {
    method: 'GET',
    path: '/v1/agents/:id/metrics',
    summary: 'Agent performance metrics',
    operation: { type: 'query', field: 'agentMetrics', query: 'filter' },
  },
  {
    method: 'GET',
    path: '/v1/integrations',
    summary: 'List configured integrations',
    operation: { type: 'query', field: 'integrations', query: 'filter' },
  },
  {
    method: 'POST',
    path: '/v1/integrations',
    summary: 'Connect an integration (CRM, PSA or M365)',
    operation: { type: 'mutation', field: 'connectIntegration', body: 'input' },
    status: 201,
  },
  {
    method: 'DELETE',
    path: '/v1/integrations/:id',
    summary: 'Disconnect an integration',
    operation: { type: 'mutation', field: 'deleteIntegration' },
  },
  {
    method: 'GET',
    path: '/v1/webhooks',
    summary: 'List webhook subscriptions',
    operation: { type: 'query', field: 'webhooks', query: 'filter' },
  },
  {
    method: 'POST',
    path: '/v1/webhooks',
    summary: 'Create a webhook subscription',
    operation: { type: 'mutation', field: 'createWebhook', body: 'input' },
    status: 201,
  },
  {
    method: 'PUT',
    path: '/v1/webhooks/:id',
    summary: 'Update a webhook URL or events',
    operation: { type: 'mutation', field: 'updateWebhook', body: 'input' },
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    summary: 'Delete a webhook subscription',
    operation: { type: 'mutation', field: 'deleteWebhook' },
  },
];
