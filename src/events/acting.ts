import { Field, ObjectType, registerEnumType } from 'type-graphql';

/** Who made a change an event records (issue 67), as Stripe's events carry the request that caused them. */
export enum ActorType {
  member = 'member',
  api_key = 'api_key',
  agent = 'agent',
  sync = 'sync',
  system = 'system',
}
registerEnumType(ActorType, {
  name: 'ActorType',
  description: 'member: a person in the web app; api_key: a key; agent: an AI agent; sync: an integration; system: the service itself.',
});

@ObjectType({
  simpleResolvers: true,
  description: 'Who made the change: a member (usr_), an API key (key_), an agent (agent_), an integration (int_), or the service (id null).',
})
export class EventActor {
  @Field(() => ActorType)
  type!: ActorType;

  @Field(() => String, { nullable: true })
  id!: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'The API request that made the change; null for changes made off a request (agents, syncs).' })
export class EventRequest {
  @Field(() => String, { description: 'The X-Request-Id of the request.' })
  id!: string;

  @Field(() => String, { nullable: true, description: 'Its Idempotency-Key, when it sent one.' })
  idempotencyKey!: string | null;
}

/** Who acts for a set of services: stamped on every event they record. */
export interface Acting {
  actor: { type: ActorType; id: string | null };
  request: { id: string; idempotencyKey: string | null } | null;
  /** Where the request came from: for the security log only, never on events. */
  client?: { address: string | null; userAgent: string | null };
}

/** The service acting on its own (retention, a trainer): the default of services built without a caller. */
export const SYSTEM: Acting = { actor: { type: ActorType.system, id: null }, request: null };

export const actingAs = (type: ActorType, id: string | null): Acting => ({ actor: { type, id }, request: null });
