import type { HubSpotObject } from './hubspot-changes';
import type { HubSpotHttp } from './hubspot-http';
import { HubSpotProperties, ID_PROPERTY } from './hubspot-mapping';

/** HubSpot's batch endpoints take at most 100 inputs. */
export const BATCH_SIZE = 100;

export type ObjectType = 'contacts' | 'companies' | 'deals';
/** What became of one object of a batch: the record's id, or HubSpot's reason for refusing it. */
export type Written = { id: string } | { error: string };
/** Batch update only: HubSpot has no live record of the id (archived or deleted there). */
type Updated = Written | { missing: true };

export interface HubSpotBatchError {
  message?: string;
  category?: string;
  context?: Record<string, unknown>;
}
export interface BatchAnswer<Result> {
  results?: Result[];
  errors?: HubSpotBatchError[];
}

/** One object to write: `key` is our id for it (a lead's or deal's id, a company key), `recordId` the HubSpot record it is linked to, when known. */
export interface WriteInput {
  key: string;
  recordId?: string;
  properties: HubSpotProperties;
}

export const chunks = <T>(items: T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / BATCH_SIZE) }, (_, i) => items.slice(i * BATCH_SIZE, (i + 1) * BATCH_SIZE));

/**
 * Writes up to 100 objects: those linked to a HubSpot record by that record's id (batch update,
 * setting `sales_pipeline_id` too), the others by our id (batch upsert, so a push repeated after a
 * crash updates what the first one created). Updating by id is what keeps a record made in
 * HubSpot by a person, which has no `sales_pipeline_id` yet, from being created a second time.
 */
export async function writeObjects(http: HubSpotHttp, objectType: ObjectType, inputs: WriteInput[]): Promise<Map<string, Written>> {
  const linked = inputs.filter((input) => Boolean(input.recordId));
  const updated = await batchUpdate(http, objectType, linked);
  const written = new Map<string, Written>();
  const toUpsert = inputs.filter((input) => !input.recordId);
  for (const input of linked) {
    const outcome = updated.get(input.key)!;
    // The linked record was archived or deleted in HubSpot since: the object is written again by our
    // id (a new record, whose id the outcome carries) rather than lost.
    if ('missing' in outcome) toUpsert.push(input);
    else written.set(input.key, outcome);
  }
  for (const [key, outcome] of await batchUpsert(http, objectType, toUpsert)) written.set(key, outcome);
  return written;
}

/** POST …/batch/upsert by `sales_pipeline_id` (the key), which creates the records it does not find. */
export async function batchUpsert(http: HubSpotHttp, objectType: ObjectType, inputs: WriteInput[]): Promise<Map<string, Written>> {
  const outcomes = await batchWrite(
    http,
    `/crm/v3/objects/${objectType}/batch/upsert`,
    inputs.map((input) => ({ key: input.key, sentId: input.key, input: { id: input.key, idProperty: ID_PROPERTY, properties: input.properties } })),
    (result) => result.properties?.[ID_PROPERTY] ?? undefined,
  );
  return outcomes as Map<string, Written>;
}

/** POST …/batch/update by HubSpot record id (BatchInputSimplePublicObjectBatchInput); ids it cannot find come back as missing. */
function batchUpdate(http: HubSpotHttp, objectType: ObjectType, inputs: WriteInput[]): Promise<Map<string, Updated>> {
  return batchWrite(
    http,
    `/crm/v3/objects/${objectType}/batch/update`,
    inputs.map((input) => ({ key: input.key, sentId: input.recordId!, input: { id: input.recordId!, properties: input.properties } })),
    (result) => result.id,
    true,
  );
}

interface SentInput {
  key: string;
  /** The input's `id` as sent, which HubSpot's errors name in `context.ids`. */
  sentId: string;
  input: Record<string, unknown>;
}

/**
 * One batch write: each input's record id, or HubSpot's reason for refusing it. A 207
 * (BatchResponseSimplePublicObjectWithErrors) names the refused inputs in `errors[].context.ids`;
 * a 4xx for the whole batch (HubSpot refuses a batch with one invalid value) is halved until the
 * refused inputs stand alone. For an update (`notFound`), an input HubSpot answers OBJECT_NOT_FOUND
 * for, in a 207 or alone, is missing rather than refused.
 */
async function batchWrite(
  http: HubSpotHttp,
  path: string,
  sent: SentInput[],
  sentIdOf: (result: HubSpotObject) => string | undefined,
  notFound = false,
): Promise<Map<string, Updated>> {
  const written = new Map<string, Updated>();
  if (sent.length === 0) return written;
  const answer = await http.post<BatchAnswer<HubSpotObject> & HubSpotBatchError>(path, { inputs: sent.map((one) => one.input) });
  if (answer.status >= 400) {
    const missing = notFound && answer.status === 404 && answer.body?.category === 'OBJECT_NOT_FOUND';
    if (sent.length === 1) return new Map([[sent[0].key, missing ? { missing: true } : { error: answer.reason }]]);
    const half = Math.ceil(sent.length / 2);
    const first = await batchWrite(http, path, sent.slice(0, half), sentIdOf, notFound);
    // The same refusal for every input of the first half: the batch itself is refused (a missing property), not some of its inputs.
    if (!missing && [...first.values()].every((result) => 'error' in result && result.error === answer.reason)) {
      return new Map(sent.map((one) => [one.key, { error: answer.reason }]));
    }
    return new Map([...first, ...(await batchWrite(http, path, sent.slice(half), sentIdOf, notFound))]);
  }
  const keyOf = new Map(sent.map((one) => [one.sentId, one.key]));
  for (const result of answer.body?.results ?? []) {
    const key = keyOf.get(sentIdOf(result) ?? '');
    if (key !== undefined) written.set(key, { id: result.id });
  }
  for (const error of answer.body?.errors ?? []) {
    for (const id of Object.values(error.context ?? {}).flat()) {
      const key = typeof id === 'string' ? keyOf.get(id) : undefined;
      if (key === undefined || written.has(key)) continue;
      written.set(key, notFound && error.category === 'OBJECT_NOT_FOUND' ? { missing: true } : { error: error.message ?? 'refused' });
    }
  }
  const unnamed = answer.body?.errors?.[0]?.message;
  for (const one of sent) {
    if (!written.has(one.key)) written.set(one.key, { error: unnamed ?? 'HubSpot did not return the record' });
  }
  return written;
}
