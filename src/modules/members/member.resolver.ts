import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { Member } from './member.entity';
import { MemberDeactivateInput, MemberInviteInput, MemberListInput, MemberUpdateInput } from './member.inputs';
import type { MemberActor } from './member.service';
import { MemberList } from './member.types';

/** The caller as the members service judges it: the session's member, or a key (acting as an admin). */
const actorOf = (ctx: RequestContext): MemberActor =>
  ctx.auth.member ? { kind: 'member', userId: ctx.auth.member.id, role: ctx.auth.member.role } : { kind: 'api_key' };

@Resolver(() => Member)
export class MemberResolver {
  @RequiresPermission('members:read')
  @Query(() => MemberList, { description: "The account's members (both modes share them), newest first.", complexity: listComplexity })
  members(@Arg('filter', () => MemberListInput, { nullable: true }) filter: MemberListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.members.list(filter);
  }

  @RequiresPermission('members:read')
  @Query(() => Member, { description: "A member by the person's id (usr_…)." })
  member(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.members.get(id);
  }

  @RequiresPermission('members:write')
  @Mutation(() => Member, {
    complexity: MUTATION_COST,
    description:
      'Invites a person by e-mail (a single-use link, 7 days). 409 resource_conflict for an active member, 409 seat_limit_reached past the plan’s seats.',
  })
  async inviteMember(@Arg('input', () => MemberInviteInput) input: MemberInviteInput, @Ctx() ctx: RequestContext) {
    return (await ctx.services.members.invite(input, actorOf(ctx))).member;
  }

  @RequiresPermission('members:write')
  @Mutation(() => Member, { complexity: MUTATION_COST, description: "Changes a member's role or name; the last active owner keeps the owner role (409)." })
  updateMember(@Arg('id', () => ID) id: string, @Arg('input', () => MemberUpdateInput) input: MemberUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.members.update(id, input, actorOf(ctx));
  }

  @RequiresPermission('members:write')
  @Mutation(() => Member, {
    complexity: MUTATION_COST,
    description:
      'Deactivates a member: they can no longer sign in to this account and their sessions end at once. Not the last active owner (409); a member who owns leads or deals needs transferTo (409 without).',
  })
  deactivateMember(
    @Arg('id', () => ID) id: string,
    @Arg('options', () => MemberDeactivateInput, { nullable: true }) options: MemberDeactivateInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.members.deactivate(id, actorOf(ctx), options?.transferTo);
  }
}
