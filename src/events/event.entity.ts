import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../common/ids';
import { TenantEntity } from '../db/base.entity';
import { API_VERSION } from './event-catalog';
import { EventActor, EventRequest } from './acting';

/** `data` of an event: the object in its REST shape, and on updates the values that changed. */
export interface EventData {
  object: Record<string, unknown>;
  previous_attributes: Record<string, unknown>;
}

/**
 * One change, written in the same transaction as the change itself (a transactional outbox):
 * webhooks are delivered from these rows, so an event exists exactly when its change committed.
 * Events never change after they are written: the insert queues each for its fan-out in a table of
 * its own (EventFanOut).
 */
@ObjectType({ simpleResolvers: true, description: 'Something that happened in an account, as webhooks deliver it (CONTRACT §10).' })
@Entity({ tableName: 'events' })
@Index({ name: 'events_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
@Index({ name: 'events_by_type', properties: ['account', 'livemode', 'type', 'createdAt', 'id'] })
@Index({
  name: 'events_by_object',
  expression: `create index "events_by_object" on "events" ("account_id", "livemode", (("data"->'object'->>'id')), "created_at", "id")`,
})
@Index({ name: 'events_created_at', properties: ['createdAt'] })
export class Event extends TenantEntity<'object' | 'apiVersion' | 'actor' | 'request'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('evt');

  @Field({ description: 'Always "event".' })
  get object(): 'event' {
    return 'event';
  }

  @Field({ description: 'What happened, e.g. lead.created or deal.stage_changed.' })
  @Property({ type: 'text' })
  type!: string;

  @Field({ description: 'The API version the payload is written in.' })
  @Property({ type: 'text' })
  apiVersion: string = API_VERSION;

  /**
   * `{object, previous_attributes}` in REST shape. Stored as `json`, not `jsonb`, so the payload
   * keeps its key order (id and object first) exactly as it was written.
   */
  @Field(() => GraphQLJSONObject, { description: "object: the resource in its REST shape; previous_attributes: changed fields' earlier values." })
  @Property({ type: 'json', columnType: 'json' })
  data!: EventData;

  /** Who made the change (null on events written before actors were recorded). */
  @Field(() => EventActor, { nullable: true })
  @Property({ type: 'json', nullable: true })
  actor?: EventActor | null = null;

  /** The request that made it, with its Idempotency-Key; null off a request. */
  @Field(() => EventRequest, { nullable: true })
  @Property({ type: 'json', nullable: true })
  request?: EventRequest | null = null;

  /** Set by EventRecorder; called while the change is flushed, so `data` shows the values stored. */
  render?: () => EventData;
}
