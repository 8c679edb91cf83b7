import { CrmSetupIncomplete } from './crm-client';
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

/**
 * POST …/batch/upsert by `sales_pipeline_id` (the key), which creates the records it does not find.
 * What the answer promises of each result (SimplePublicUpsertObject) is its record `id`; its
 * `properties` need not hold our id, and results come in no stated order. A result that does carry
 * our id is taken at its word; the inputs left are paired with the results left when one of each
 * remains, else read back by our id (identify()).
 */
export async function batchUpsert(http: HubSpotHttp, objectType: ObjectType, inputs: WriteInput[]): Promise<Map<string, Written>> {
  const outcomes = await batchWrite(
    http,
    `/crm/v3/objects/${objectType}/batch/upsert`,
    inputs.map((input) => ({ key: input.key, sentId: input.key, input: { id: input.key, idProperty: ID_PROPERTY, properties: input.properties } })),
    (result) => result.properties?.[ID_PROPERTY] ?? undefined,
    (unmatched, unclaimed) => identify(http, objectType, unmatched, unclaimed),
  );
  return outcomes as Map<string, Written>;
}

/** POST …/batch/update by HubSpot record id (BatchInputSimplePublicObjectBatchInput), answered by record id; ids it cannot find come back as missing. */
function batchUpdate(http: HubSpotHttp, objectType: ObjectType, inputs: WriteInput[]): Promise<Map<string, Updated>> {
  return batchWrite(
    http,
    `/crm/v3/objects/${objectType}/batch/update`,
    inputs.map((input) => ({ key: input.key, sentId: input.recordId!, input: { id: input.recordId!, properties: input.properties } })),
    (result) => result.id,
    (unmatched) => Promise.resolve(new Map(unmatched.map((one) => [one.key, { error: NOT_RETURNED }]))),
    true,
  );
}

const NOT_RETURNED = 'HubSpot did not return the record';

/**
 * HubSpot's own word that a property we write is missing (400 VALIDATION_ERROR, error
 * PROPERTY_DOESNT_EXIST naming it): our id property was deleted there since it was set up.
 */
export class IdPropertyMissing extends CrmSetupIncomplete {
  constructor(path: string) {
    super(`HubSpot says the property ${ID_PROPERTY} does not exist (${path}); it is made again on the next sync`);
  }
}

const saysIdPropertyMissing = (message: string | undefined): boolean =>
  message !== undefined && message.includes('PROPERTY_DOESNT_EXIST') && message.includes(ID_PROPERTY);

interface SentInput {
  key: string;
  /** The input's `id` as sent, which HubSpot's errors name in `context.ids`. */
  sentId: string;
  input: Record<string, unknown>;
}

/** Outcomes for the inputs an answer neither returned recognisably nor refused by name, given the results no input claimed. */
type Settle = (unmatched: SentInput[], unclaimed: HubSpotObject[]) => Promise<Map<string, Updated>>;

/**
 * One batch write: each input's record id, or HubSpot's reason for refusing it. A 207
 * (…WithErrors) names the refused inputs in `errors[].context.ids`; a 4xx for the whole batch
 * (HubSpot refuses a batch with one invalid value) is halved until the refused inputs stand alone.
 * For an update (`notFound`), an input HubSpot answers OBJECT_NOT_FOUND for, in a 207 or alone, is
 * missing rather than refused. Results are matched to inputs by `sentIdOf`; the inputs left over go
 * to `settle`, unless an error named no input (then any of them may be the refused one, and each
 * gets that error). A missing `sales_pipeline_id` property throws IdPropertyMissing.
 */
async function batchWrite(
  http: HubSpotHttp,
  path: string,
  sent: SentInput[],
  sentIdOf: (result: HubSpotObject) => string | undefined,
  settle: Settle,
  notFound = false,
): Promise<Map<string, Updated>> {
  const written = new Map<string, Updated>();
  if (sent.length === 0) return written;
  const answer = await http.post<BatchAnswer<HubSpotObject> & HubSpotBatchError>(path, { inputs: sent.map((one) => one.input) });
  if (answer.status >= 400) {
    if (answer.status === 400 && saysIdPropertyMissing(answer.body?.message)) throw new IdPropertyMissing(path);
    const missing = notFound && answer.status === 404 && answer.body?.category === 'OBJECT_NOT_FOUND';
    if (sent.length === 1) return new Map([[sent[0].key, missing ? { missing: true } : { error: answer.reason }]]);
    const half = Math.ceil(sent.length / 2);
    const first = await batchWrite(http, path, sent.slice(0, half), sentIdOf, settle, notFound);
    // The same refusal for every input of the first half: the batch itself is refused (a missing property), not some of its inputs.
    if (!missing && [...first.values()].every((result) => 'error' in result && result.error === answer.reason)) {
      return new Map(sent.map((one) => [one.key, { error: answer.reason }]));
    }
    return new Map([...first, ...(await batchWrite(http, path, sent.slice(half), sentIdOf, settle, notFound))]);
  }
  const keyOf = new Map(sent.map((one) => [one.sentId, one.key]));
  const unclaimed: HubSpotObject[] = [];
  for (const result of answer.body?.results ?? []) {
    const key = keyOf.get(sentIdOf(result) ?? '');
    if (key !== undefined && !written.has(key)) written.set(key, { id: result.id });
    else unclaimed.push(result);
  }
  let unnamed: string | undefined;
  for (const error of answer.body?.errors ?? []) {
    if (saysIdPropertyMissing(error.message)) throw new IdPropertyMissing(path);
    const keys = Object.values(error.context ?? {})
      .flat()
      .flatMap((id) => (typeof id === 'string' && keyOf.has(id) ? [keyOf.get(id)!] : []));
    if (keys.length === 0) unnamed ??= error.message ?? 'refused';
    for (const key of keys) {
      if (!written.has(key)) written.set(key, notFound && error.category === 'OBJECT_NOT_FOUND' ? { missing: true } : { error: error.message ?? 'refused' });
    }
  }
  const unmatched = sent.filter((one) => !written.has(one.key));
  if (unmatched.length === 0) return written;
  const settled = unnamed === undefined ? await settle(unmatched, unclaimed) : new Map(unmatched.map((one) => [one.key, { error: unnamed }]));
  for (const one of unmatched) written.set(one.key, settled.get(one.key) ?? { error: NOT_RETURNED });
  return written;
}

/**
 * Upserted inputs whose results did not carry our id: with one input and one result left they are
 * each other's; otherwise the records are read back by our id (POST …/batch/read with `idProperty`,
 * BatchReadInputSimplePublicObjectId, asking for that property, which a read returns), one call
 * for the batch. An input not found there was not written.
 */
async function identify(http: HubSpotHttp, objectType: ObjectType, unmatched: SentInput[], unclaimed: HubSpotObject[]): Promise<Map<string, Updated>> {
  if (unmatched.length === 1 && unclaimed.length === 1) return new Map([[unmatched[0].key, { id: unclaimed[0].id }]]);
  const read = await http.post<BatchAnswer<HubSpotObject>>(`/crm/v3/objects/${objectType}/batch/read`, {
    idProperty: ID_PROPERTY,
    inputs: unmatched.map((one) => ({ id: one.sentId })),
    properties: [ID_PROPERTY],
    propertiesWithHistory: [],
  });
  const found = new Map((read.body?.results ?? []).map((record) => [record.properties?.[ID_PROPERTY] ?? '', record.id]));
  const notFound = read.status >= 400 ? `${NOT_RETURNED}, and reading it back failed: ${read.reason}` : NOT_RETURNED;
  return new Map(unmatched.map((one): [string, Updated] => [one.key, found.has(one.sentId) ? { id: found.get(one.sentId)! } : { error: notFound }]));
}
