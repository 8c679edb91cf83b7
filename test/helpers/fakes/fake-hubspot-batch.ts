import type { FakeAnswer } from './fake-provider';
import { FakeHubSpotObject, FakeHubSpotStore, FakeValidationError, HubSpotObjectType, propertyDoesNotExist, SEARCH_DEFAULTS } from './fake-hubspot-store';

/**
 * The fake HubSpot's batch endpoints (CRM Objects v3, `POST /crm/v3/objects/{objectType}/batch/…`),
 * as the document's schemas describe them and no further: a result is SimplePublicObject (upsert:
 * SimplePublicUpsertObject, with `new`) whose `properties` are the object's default ones, as no
 * request here names properties to return (the document's table: contacts firstname, lastname,
 * email; companies name, domain; deals dealname, amount, closedate, pipeline, dealstage; with the
 * search guide's hs_object_id, createdate and last-modified time); nothing says our id comes back.
 * Nor does anything say in which order: results come newest input first, so a client that pairs
 * them with its inputs by position fails here (HubSpot's own answers come in an order of their
 * own, HubSpot/hubspot-api-nodejs#190).
 */

const MAX_BATCH = 100;

type Body = Record<string, unknown>;
interface BatchInput {
  id?: unknown;
  idProperty?: unknown;
  properties?: Record<string, unknown>;
}

export interface BatchContext {
  store: FakeHubSpotStore;
  /** HubSpot's `Error` body for the whole request. */
  error: (status: number, category: string, message: string) => FakeAnswer;
  /** Results carry every property the input wrote, as HubSpot is commonly seen answering (but does not promise). */
  echoProperties: boolean;
}

/** A record as the API answers it: the properties named (else the type's defaults), each a string ("" when it has none: the document types values as strings). */
export function present(type: HubSpotObjectType, object: FakeHubSpotObject, names: string[] = SEARCH_DEFAULTS[type]) {
  const always = ['hs_object_id', 'createdate', type === 'contacts' ? 'lastmodifieddate' : 'hs_lastmodifieddate'];
  const properties = Object.fromEntries([...new Set([...names, ...always])].map((name) => [name, object.properties[name] ?? '']));
  return {
    id: object.id,
    properties,
    createdAt: object.createdAt,
    updatedAt: object.updatedAt,
    archived: object.archived,
    ...(object.archivedAt ? { archivedAt: object.archivedAt } : {}),
  };
}

export function inputsOf(body: Body): BatchInput[] {
  if (!Array.isArray(body.inputs)) throw new FakeValidationError('Invalid input JSON: inputs is required');
  if (body.inputs.length > MAX_BATCH)
    throw new FakeValidationError(`Batch input limit exceeded: ${body.inputs.length} inputs were given, at most ${MAX_BATCH} are allowed`);
  return body.inputs as BatchInput[];
}

export function batchTimes() {
  const time = new Date().toISOString();
  return { status: 'COMPLETE', requestedAt: time, startedAt: time, completedAt: time };
}

/** A StandardError naming the inputs it is about (context.ids). */
function standardError(category: string, message: string, ids: string[]) {
  return { status: 'error', category, message, context: { ids }, errors: [{ message }], links: {} };
}

function answered(results: unknown[], errors: unknown[]): FakeAnswer {
  results.reverse();
  if (errors.length === 0) return { status: 200, body: { ...batchTimes(), results } };
  return { status: 207, body: { ...batchTimes(), results, errors, numErrors: errors.length } };
}

/** HubSpot refuses a batch that names one id twice (upsert and update alike). */
function duplicateIds(context: BatchContext, inputs: BatchInput[]): FakeAnswer | undefined {
  const ids = inputs.map((input) => String(input.id ?? ''));
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length === 0) return undefined;
  return context.error(400, 'VALIDATION_ERROR', `Duplicate IDs found in batch input: [${[...new Set(twice)].join(', ')}]. IDs must be unique`);
}

/** Why a unique-value property cannot identify records (undefined: it can). */
function notAnIdProperty(context: BatchContext, type: HubSpotObjectType, idProperty: string): FakeAnswer | undefined {
  const property = context.store.definitions[type].get(idProperty);
  if (!property) return context.error(400, 'VALIDATION_ERROR', propertyDoesNotExist(idProperty));
  if (property.hasUniqueValue || (type === 'contacts' && idProperty === 'email')) return undefined;
  return context.error(400, 'VALIDATION_ERROR', `Unable to perform update/upsert by non-unique ${type} property ${idProperty}`);
}

/**
 * POST …/batch/upsert (BatchInputSimplePublicObjectBatchInputUpsert): by a unique-value
 * `idProperty`, 200 BatchResponseSimplePublicUpsertObject, 207 …WithErrors (StandardError,
 * context.ids naming the inputs) when some inputs are refused, 400 for the batch itself (more than
 * 100 inputs, one id twice, an idProperty that is missing or not unique-value).
 */
export function upsertBatch(context: BatchContext, type: HubSpotObjectType, body: Body): FakeAnswer {
  const { store } = context;
  const inputs = inputsOf(body);
  const refused = duplicateIds(context, inputs);
  if (refused) return refused;
  for (const input of inputs) {
    const idProperty = typeof input.idProperty === 'string' ? input.idProperty : '';
    if (idProperty === '') return context.error(400, 'VALIDATION_ERROR', `Upsert of ${type} needs an idProperty`);
    const wrong = notAnIdProperty(context, type, idProperty);
    if (wrong) return wrong;
  }
  const results: unknown[] = [];
  const errors: unknown[] = [];
  for (const input of inputs) {
    const id = input.id as string;
    const idProperty = input.idProperty as string;
    const existing = store.holder(type, idProperty, id);
    const properties = { ...(input.properties ?? {}), [idProperty]: id };
    const invalid = store.invalid(type, properties, existing);
    if (invalid) {
      errors.push(standardError('VALIDATION_ERROR', invalid, [id]));
      continue;
    }
    const written = existing
      ? store.update(existing, properties as Record<string, string | null>)
      : store.create(type, properties as Record<string, string | null>);
    results.push({ ...present(type, written, returned(context, type, properties)), new: !existing });
  }
  return answered(results, errors);
}

/**
 * POST …/batch/update (BatchInputSimplePublicObjectBatchInput: `id` the record id, or the value of
 * a unique-value `idProperty`; `properties`): 200 BatchResponseSimplePublicObject, 207
 * …WithErrors when some inputs are refused (validated as upsert does, unique values included) or
 * name no live record (OBJECT_NOT_FOUND), 400 for the batch itself; modified times move forward.
 */
export function updateBatch(context: BatchContext, type: HubSpotObjectType, body: Body): FakeAnswer {
  const { store } = context;
  const inputs = inputsOf(body);
  const refused = duplicateIds(context, inputs);
  if (refused) return refused;
  for (const input of inputs) {
    if (input.idProperty === undefined) continue;
    const wrong = notAnIdProperty(context, type, String(input.idProperty));
    if (wrong) return wrong;
  }
  const results: unknown[] = [];
  const errors: unknown[] = [];
  for (const input of inputs) {
    const id = input.id as string;
    const object = input.idProperty === undefined ? store.get(type, id) : store.holder(type, input.idProperty as string, id);
    if (!object || object.archived) {
      errors.push(standardError('OBJECT_NOT_FOUND', `No ${type} record was found for id ${id}; it may be archived or deleted`, [id]));
      continue;
    }
    const properties = input.properties ?? {};
    const invalid = store.invalid(type, properties, object);
    if (invalid) {
      errors.push(standardError('VALIDATION_ERROR', invalid, [id]));
      continue;
    }
    results.push(present(type, store.update(object, properties as Record<string, string | null>), returned(context, type, properties)));
  }
  return answered(results, errors);
}

/** POST …/batch/archive (BatchInputSimplePublicObjectId): 204, ids already archived or unknown included. */
export function archiveBatch(context: BatchContext, type: HubSpotObjectType, body: Body): FakeAnswer {
  for (const input of inputsOf(body)) {
    const object = context.store.get(type, String(input.id));
    if (object) context.store.archive(object);
  }
  return { status: 204 };
}

/**
 * POST …/batch/read (BatchReadInputSimplePublicObjectId: `inputs` ids, by record id or by a
 * unique-value `idProperty`; `properties` to return): 200 BatchResponseSimplePublicObject with the
 * live records found, each with the properties asked for; 207 …WithErrors naming the ids that find
 * none (OBJECT_NOT_FOUND).
 */
export function readBatch(context: BatchContext, type: HubSpotObjectType, body: Body): FakeAnswer {
  const { store } = context;
  const inputs = inputsOf(body);
  const idProperty = typeof body.idProperty === 'string' ? body.idProperty : undefined;
  if (idProperty !== undefined) {
    const wrong = notAnIdProperty(context, type, idProperty);
    if (wrong) return wrong;
  }
  const asked = Array.isArray(body.properties) && body.properties.length > 0 ? (body.properties as string[]) : undefined;
  const results: unknown[] = [];
  const missing: string[] = [];
  for (const input of inputs) {
    const id = String(input.id);
    const object = idProperty === undefined ? store.get(type, id) : store.holder(type, idProperty, id);
    if (!object || object.archived) missing.push(id);
    else results.push(present(type, object, asked));
  }
  const errors =
    missing.length === 0
      ? []
      : [standardError('OBJECT_NOT_FOUND', `Could not get some ${type} objects, they may be deleted or not exist. Check that ids are valid.`, missing)];
  return answered(results, errors);
}

/** The properties a write's result carries: the defaults, or (echoing) every one it wrote too. */
function returned(context: BatchContext, type: HubSpotObjectType, written: Record<string, unknown>): string[] {
  return context.echoProperties ? [...SEARCH_DEFAULTS[type], ...Object.keys(written)] : SEARCH_DEFAULTS[type];
}
