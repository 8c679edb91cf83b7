import type { EntityManager } from '@mikro-orm/postgresql';
import type { JsonSchema } from '../../common/json-schema';
import { tenantFork } from '../../db/tenant';
import { allows } from '../accounts/key-permissions';
import { type Authenticated, callerPermissions } from '../accounts/api-key.service';
import { CustomField, FieldObject, FieldType } from './field.entity';

/**
 * The account's own OpenAPI document (issue 68): the generic document with the mode's custom
 * fields as typed properties of `fields` on leads and deals (their objects, create and update
 * bodies, and list filters), so a client generated from it knows them. The generic document is
 * not changed: each call answers a copy.
 */

type Json = Record<string, unknown>;
const MEMBER_ID = '^usr_[0-9A-HJKMNP-TV-Z]{26}$';
const PHONE = '^\\+?[0-9][0-9 ().-]{2,31}$';
const ORDERED: readonly FieldType[] = [FieldType.number, FieldType.money, FieldType.date, FieldType.datetime];

/** What a value of the field is, as JSON Schema; `stored` includes archived options (records may hold them). */
export function valueSchema(field: CustomField, stored: boolean): JsonSchema {
  const values = field.options.filter((option) => stored || !option.archived).map((option) => option.value);
  const about = { title: field.label, ...(field.description ? { description: field.description } : {}) };
  switch (field.type) {
    case FieldType.text:
      return { ...about, type: 'string', minLength: 1, maxLength: 1000 };
    case FieldType.long_text:
      return { ...about, type: 'string', minLength: 1, maxLength: 65535 };
    case FieldType.number:
      return { ...about, type: 'number', minimum: -1e15, maximum: 1e15 };
    case FieldType.money:
      return { ...about, type: 'number', minimum: -1e13, maximum: 1e13, description: `${field.description ?? field.label}: at most 2 decimals.` };
    case FieldType.date:
      return { ...about, type: 'string', format: 'date' };
    case FieldType.datetime:
      return { ...about, type: 'string', format: 'date-time' };
    case FieldType.boolean:
      return { ...about, type: 'boolean' };
    case FieldType.select:
      return { ...about, type: 'string', enum: values };
    case FieldType.multi_select:
      return { ...about, type: 'array', items: { type: 'string', enum: values }, uniqueItems: true };
    case FieldType.url:
      return { ...about, type: 'string', format: 'uri', maxLength: 2048 };
    case FieldType.email:
      return { ...about, type: 'string', format: 'email', maxLength: 254 };
    case FieldType.phone:
      return { ...about, type: 'string', pattern: PHONE };
    case FieldType.member:
      return { ...about, type: 'string', pattern: MEMBER_ID };
  }
}

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

/** A list filter on the field: a value or comma list, or for ordered types a range object too. */
function filterSchema(field: CustomField): JsonSchema {
  const text: JsonSchema = { type: 'string', title: field.label };
  if (!ORDERED.includes(field.type)) return text;
  const bound = { type: 'string' };
  return { anyOf: [text, { type: 'object', properties: { gt: bound, gte: bound, lt: bound, lte: bound }, additionalProperties: false, minProperties: 1 }] };
}

/** `fields` of one object in the document: the object, its create and update bodies, and its lists' filter. */
function patchObject(document: Json, name: 'Lead' | 'Deal', fields: CustomField[]): void {
  const schemas = (document.components as Json).schemas as Record<string, Json>;
  const props = (schema: string) => (schemas[schema].properties as Record<string, Json>).fields;
  const byKey = (make: (field: CustomField) => JsonSchema) => Object.fromEntries(fields.map((field) => [field.key, make(field)]));
  Object.assign(props(name), { properties: byKey((field) => valueSchema(field, true)), additionalProperties: false });
  const required = fields.filter((field) => field.required).map((field) => field.key);
  Object.assign(props(`${name}CreateInput`), {
    properties: byKey((field) => (field.required ? valueSchema(field, false) : nullable(valueSchema(field, false)))),
    additionalProperties: false,
    ...(required.length ? { required } : {}),
  });
  Object.assign(props(`${name}UpdateInput`), {
    properties: byKey((field) => (field.required ? valueSchema(field, false) : nullable(valueSchema(field, false)))),
    additionalProperties: false,
  });
  const list = ((document.paths as Json)[`/v1/${name.toLowerCase()}s`] as Json).get as Json;
  const parameter = (list.parameters as Json[]).find((candidate) => candidate.name === 'fields');
  if (parameter) {
    parameter.schema = {
      type: 'object',
      properties: Object.fromEntries(fields.filter((field) => field.type !== FieldType.long_text).map((field) => [field.key, filterSchema(field)])),
      additionalProperties: false,
    };
  }
}

/** A copy of `generic` (the parsed generic document) with the fields of an account's mode. */
export function accountDocument(generic: Json, fields: CustomField[], livemode: boolean): Json {
  const document = structuredClone(generic);
  patchObject(
    document,
    'Lead',
    fields.filter((field) => field.objectType === FieldObject.lead),
  );
  patchObject(
    document,
    'Deal',
    fields.filter((field) => field.objectType === FieldObject.deal),
  );
  const info = document.info as Json;
  info.description = `${String(info.description ?? '')}\n\nThis copy describes the custom fields of your account in ${livemode ? 'live' : 'test'} mode, as of ${new Date().toISOString()}.`;
  return document;
}

/** The document for a caller: their mode's fields, or undefined (the generic one) for a key that may not read fields. */
export async function documentFor(em: EntityManager, auth: Authenticated, generic: Json): Promise<Json | undefined> {
  if (!allows(callerPermissions(auth), 'fields:read')) return undefined;
  const fields = await tenantFork(em, { accountId: auth.account.id, livemode: auth.livemode }).find(
    CustomField,
    {},
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return accountDocument(generic, fields, auth.livemode);
}
