import { defineModule } from '../module';
import { ProposalPdf } from './proposal-pdf.entity';
import { Proposal, ProposalNumber } from './proposal.entity';
import { DealProposalsResolver, ProposalResolver } from './proposal.resolver';
import { ProposalService } from './proposal.service';

const PROPOSAL_EVENTS = ['proposal.created'] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof PROPOSAL_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    proposals: ProposalService;
  }
}

export const proposalsModule = defineModule({
  name: 'proposals',
  entities: [Proposal, ProposalNumber, ProposalPdf],
  events: PROPOSAL_EVENTS,
  resolvers: [ProposalResolver, DealProposalsResolver],
  routes: [
    { method: 'GET', path: '/v1/proposals', summary: 'List proposals', operation: { type: 'query', field: 'proposals', query: 'filter' } },
    {
      method: 'POST',
      path: '/v1/proposals',
      summary: 'Generate a proposal from deal data',
      operation: { type: 'mutation', field: 'createProposal', body: 'input' },
      errors: ['resource_missing'],
      status: 201,
    },
    { method: 'GET', path: '/v1/proposals/:id', summary: 'Proposal details and PDF URL', operation: { type: 'query', field: 'proposal' } },
    { method: 'GET', path: '/v1/proposals/:id/pdf', summary: 'Download a proposal as PDF', operation: { type: 'query', field: 'proposalPdf' }, file: true },
  ],
  services: { proposals: ({ em, events, settings }) => new ProposalService(em, events, settings.config.publicUrl, settings.proposalPdfs) },
});
