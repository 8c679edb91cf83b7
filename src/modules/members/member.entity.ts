import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Ref, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { AccountScopedEntity } from '../../db/base.entity';
import type { Role } from '../accounts/key-permissions';
import { User } from '../accounts/user.entity';

/** The roles (src/modules/accounts/key-permissions.ts, ROLE_PERMISSIONS) as a GraphQL enum. */
export const MemberRole = { owner: 'owner', admin: 'admin', member: 'member', viewer: 'viewer' } as const satisfies Record<Role, Role>;
registerEnumType(MemberRole, {
  name: 'MemberRole',
  description: 'owner: everything; admin: everything but the plan and owners; member: leads, deals, proposals and agents; viewer: read only.',
});

export enum MemberStatus {
  invited = 'invited',
  active = 'active',
  deactivated = 'deactivated',
}
registerEnumType(MemberStatus, { name: 'MemberStatus', description: 'invited until the invitation is accepted; deactivated members cannot sign in.' });

/**
 * A person's place in an account: their role and status. Both modes share an account's members.
 * Its `id` to clients is the person's (`usr_…`), the same in every account they belong to.
 */
@ObjectType({ simpleResolvers: true, description: 'A person of the account and what they may do.' })
@Entity({ tableName: 'members' })
@Unique({ name: 'members_account_user_unique', properties: ['account', 'user'] })
@Index({ name: 'members_list', properties: ['account', 'createdAt', 'id'] })
export class Member extends AccountScopedEntity<'status' | 'lastSeenAt' | 'invitedBy' | 'userId' | 'object' | 'email' | 'name'> {
  @PrimaryKey({ type: 'text' })
  id: string = newId('mem');

  @ManyToOne(() => User, { ref: true, deleteRule: 'cascade', index: true })
  user!: Ref<User>;

  @Field(() => ID, { name: 'id', description: "The person's id (usr_…), the same in every account they belong to." })
  get userId(): string {
    return this.user.id;
  }

  @Field({ description: 'Always "member".' })
  get object(): 'member' {
    return 'member';
  }

  @Field({ description: 'Sign-in address.' })
  get email(): string {
    return this.user.getEntity().email;
  }

  @Field()
  get name(): string {
    return this.user.getEntity().name;
  }

  @Field(() => MemberRole)
  @Property({ type: 'text' })
  role!: Role;

  @Field(() => MemberStatus)
  @Enum({ items: () => MemberStatus, nativeEnumName: undefined })
  status: MemberStatus = MemberStatus.invited;

  @Field(() => Date, { nullable: true, description: 'When the member last used the web app in this account (to the minute).' })
  @Property({ type: 'datetime', length: 3, nullable: true })
  lastSeenAt?: Date | null;

  /** Who invited them (a user id); null for an account's first owner. */
  @Property({ type: 'text', nullable: true })
  invitedBy?: string | null;
}
