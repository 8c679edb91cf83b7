import { defineModule } from '../module';
import { Lead } from './lead.entity';
import { LeadResolver } from './lead.resolver';
import { LeadService } from './lead.service';

const LEAD_EVENTS = ['lead.created', 'lead.updated', 'lead.deleted', 'lead.scored'] as const;

declare module '../../events/event-catalog' {
  interface EventTypes extends Record<(typeof LEAD_EVENTS)[number], true> {}
}

declare module '../module' {
  interface Services {
    leads: LeadService;
  }
}

export const leadsModule = defineModule({
  name: 'leads',
  entities: [Lead],
  events: LEAD_EVENTS,
  resolvers: [LeadResolver],
  conflicts: { leads_contact_email_unique: { param: 'contactEmail', message: 'A lead with this contactEmail already exists' } },
  routes: [
    { method: 'GET', path: '/v1/leads', summary: 'List leads', operation: { type: 'query', field: 'leads', query: 'filter' } },
    { method: 'GET', path: '/v1/leads/:id', summary: 'Retrieve a lead', operation: { type: 'query', field: 'lead' } },
    {
      method: 'POST',
      path: '/v1/leads',
      summary: 'Create a lead',
      operation: { type: 'mutation', field: 'createLead', body: 'input' },
      errors: ['resource_conflict'],
      status: 201,
    },
    {
      method: 'PUT',
      path: '/v1/leads/:id',
      summary: 'Update a lead',
      operation: { type: 'mutation', field: 'updateLead', body: 'input' },
      errors: ['resource_conflict', 'invalid_status_transition'],
    },
    { method: 'DELETE', path: '/v1/leads/:id', summary: 'Delete a lead', operation: { type: 'mutation', field: 'deleteLead' } },
    { method: 'GET', path: '/v1/leads/:id/score', summary: 'Lead score and signals', operation: { type: 'query', field: 'leadScore' } },
  ],
  services: { leads: ({ em, services, events }) => new LeadService(em, services.scoring, events) },
});
