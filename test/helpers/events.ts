import { EntityManager } from '@mikro-orm/postgresql';
import { EventRecorder } from '../../src/events/event-recorder';
import { createSchema } from '../../src/app/schema';
import { RestSerializer } from '../../src/rest/serialize';

let serializer: Promise<RestSerializer> | undefined;

/** The app's REST serializer over the real schema, built once per test file. */
export function testSerializer(): Promise<RestSerializer> {
  serializer ??= createSchema().then((schema) => new RestSerializer(schema));
  return serializer;
}

/** An EventRecorder on `em`, as the context factory builds one for each request. */
export async function recorderFor(em: EntityManager): Promise<EventRecorder> {
  return new EventRecorder(em, await testSerializer());
}
