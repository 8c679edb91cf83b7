import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../../common/ids';
import { AccountScopedEntity } from '../../db/base.entity';
import { EventActor } from '../../events/acting';

/** What the security log records (issue 67). */
export const SECURITY_EVENT_TYPES = [
  'sign_in.succeeded',
  'sign_in.failed',
  'member.invited',
  'member.joined',
  'member.role_changed',
  'member.deactivated',
  'api_key.created',
  'api_key.rolled',
  'api_key.revoked',
  'integration.connected',
  'integration.disconnected',
  'webhook.secret_rolled',
  'account.plan_changed',
  'sso.changed',
  'two_factor.changed',
] as const;
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

/** How long the log keeps an entry. */
export const SECURITY_LOG_RETENTION_DAYS = 400;

/**
 * One entry of an account's security log: who did what to its access, kept 400 days apart from
 * the events (which webhooks deliver, and which are kept far shorter). Both modes share it. Written
 * in the same transaction as the change it records; nothing changes or deletes it but retention.
 */
@ObjectType({ simpleResolvers: true, description: 'An entry of the security log: sign-ins, members, keys, integrations, plan changes.' })
@Entity({ tableName: 'security_events' })
@Index({ name: 'security_events_list', properties: ['account', 'createdAt', 'id'] })
@Index({ name: 'security_events_by_type', properties: ['account', 'type', 'createdAt', 'id'] })
@Index({ name: 'security_events_by_member', properties: ['account', 'memberId', 'createdAt', 'id'] })
@Index({ name: 'security_events_created_at', properties: ['createdAt'] })
export class SecurityEvent extends AccountScopedEntity<'object' | 'memberId' | 'address' | 'userAgent' | 'details'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('sev');

  @Field({ description: 'Always "security_event".' })
  get object(): 'security_event' {
    return 'security_event';
  }

  @Field(() => String, { description: `One of ${SECURITY_EVENT_TYPES.join(', ')}.` })
  @Property({ type: 'text' })
  type!: SecurityEventType;

  @Field(() => EventActor, { description: 'Who did it.' })
  @Property({ type: 'jsonb' })
  actor!: EventActor;

  @Field(() => String, { nullable: true, description: 'The member it concerns (usr_…): who signed in, was invited, changed or removed.' })
  @Property({ type: 'text', nullable: true })
  memberId?: string | null = null;

  @Field(() => String, { nullable: true, description: 'The client address of the request, where there was one.' })
  @Property({ type: 'text', nullable: true })
  address?: string | null = null;

  @Field(() => String, { nullable: true, description: 'Its User-Agent.' })
  @Property({ type: 'text', nullable: true })
  userAgent?: string | null = null;

  @Field(() => GraphQLJSONObject, { description: 'What changed: a role, a key id and name, a provider, a plan.' })
  @Property({ type: 'jsonb' })
  details: Record<string, unknown> = {};
}
