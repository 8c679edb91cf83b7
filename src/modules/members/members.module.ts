import { defineModule } from '../module';
import { Member } from './member.entity';
import { MemberResolver } from './member.resolver';
import { MemberService } from './member.service';

declare module '../module' {
  interface Services {
    members: MemberService;
  }
}

/** The people of an account (issue 67): invitations, roles, deactivation. */
export const membersModule = defineModule({
  name: 'members',
  entities: [Member],
  resolvers: [MemberResolver],
  conflicts: {
    members_account_user_unique: { param: 'email', message: 'This person is already a member of the account' },
  },
  routes: [
    { method: 'GET', path: '/v1/members', summary: 'List members', operation: { type: 'query', field: 'members', query: 'filter' } },
    { method: 'GET', path: '/v1/members/:id', summary: 'Retrieve a member', operation: { type: 'query', field: 'member' } },
    {
      method: 'POST',
      path: '/v1/members',
      summary: 'Invite a member',
      operation: { type: 'mutation', field: 'inviteMember', body: 'input' },
      errors: ['resource_conflict', 'seat_limit_reached'],
      status: 201,
    },
    {
      method: 'PUT',
      path: '/v1/members/:id',
      summary: "Change a member's role or name",
      operation: { type: 'mutation', field: 'updateMember', body: 'input' },
      errors: ['resource_conflict'],
    },
    {
      method: 'DELETE',
      path: '/v1/members/:id',
      summary: 'Deactivate a member (?transfer_to=usr_… hands their leads and deals over)',
      operation: { type: 'mutation', field: 'deactivateMember', query: 'options' },
      errors: ['resource_conflict'],
    },
  ],
  services: {
    members: ({ em, settings, events }) =>
      new MemberService(em, { acting: events.acting, mailer: settings.mailer, publicUrl: settings.config.publicUrl, logger: settings.logger }),
  },
});
