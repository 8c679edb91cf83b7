import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, notFound } from '../../common/api-error';
import { camelToSnake } from '../../common/case';
import { isId } from '../../common/ids';
import { findPage, type Page } from '../../common/pagination';
import { createScoped, tenantOf } from '../../db/tenant';
import { CustomField, FieldObject, FieldOption, MAX_FIELDS_PER_OBJECT, OPTION_TYPES, UNIQUE_TYPES } from './field.entity';
import { createUniqueIndex, dropUniqueIndex, tableOf } from './field-indexes';
import type { FieldCreateInput, FieldListInput, FieldOptionInput, FieldUpdateInput } from './field.inputs';

/** The entity each object's built-in names come from (a custom key never shadows one). */
const ENTITY_OF: Record<FieldObject, string> = { lead: 'Lead', deal: 'Deal' };

/** Custom fields of leads and deals (issue 68): definitions per account and mode; their values are checked by field-values.ts. */
export class FieldService {
  constructor(private readonly em: EntityManager) {}

  list(input: FieldListInput = {}): Promise<Page<CustomField>> {
    return findPage(this.em, CustomField, input.objectType ? [{ objectType: input.objectType }] : [], input);
  }

  async get(id: string): Promise<CustomField> {
    const field = isId('fld', id) ? await this.em.findOne(CustomField, { id }) : null;
    if (!field) throw notFound('field', id);
    return field;
  }

  async create(input: FieldCreateInput): Promise<CustomField> {
    const builtIn = this.builtInNames(input.objectType);
    if (builtIn.has(input.key)) {
      throw new ApiError('parameter_invalid', `key ${input.key} is a built-in field of ${input.objectType}s: choose another`, { param: 'key' });
    }
    const hasOptions = OPTION_TYPES.includes(input.type);
    if (hasOptions && !input.options?.length) throw new ApiError('parameter_missing', `A ${input.type} field needs options`, { param: 'options' });
    if (!hasOptions && input.options?.length) throw new ApiError('parameter_invalid', `A ${input.type} field has no options`, { param: 'options' });
    if (input.unique && !UNIQUE_TYPES.includes(input.type)) {
      throw new ApiError('parameter_invalid', `unique is for ${UNIQUE_TYPES.join(', ')} fields, not ${input.type}`, { param: 'unique' });
    }
    return this.em.transactional(async (em) => {
      const count = await em.count(CustomField, { objectType: input.objectType });
      if (count >= MAX_FIELDS_PER_OBJECT) {
        throw new ApiError('resource_conflict', `${input.objectType}s have ${MAX_FIELDS_PER_OBJECT} custom fields in this mode, the most there may be`);
      }
      const field = createScoped(em, CustomField, {
        objectType: input.objectType,
        key: input.key,
        label: input.label,
        type: input.type,
        options: hasOptions ? optionsOf(input.options ?? [], []) : [],
        required: input.required ?? false,
        unique: input.unique ?? false,
        description: input.description ?? null,
      });
      await em.flush(); // the key's uniqueness first (409 custom_fields_key_unique), then the index
      if (field.unique) await createUniqueIndex(em, field);
      return field;
    });
  }

  async update(id: string, input: FieldUpdateInput): Promise<CustomField> {
    const field = await this.get(id);
    if (input.label !== undefined) field.label = input.label;
    if (input.description !== undefined) field.description = input.description;
    if (input.required !== undefined) field.required = input.required;
    if (input.options !== undefined && input.options !== null && (input.options.length > 0 || OPTION_TYPES.includes(field.type))) {
      if (!OPTION_TYPES.includes(field.type)) throw new ApiError('parameter_invalid', `A ${field.type} field has no options`, { param: 'options' });
      field.options = optionsOf(input.options, field.options);
    }
    await this.em.flush();
    return field;
  }

  /** Deletes the definition and every value of it (and its unique index), in one transaction. */
  async delete(id: string): Promise<string> {
    const field = await this.get(id);
    const { accountId, livemode } = tenantOf(this.em);
    await this.em.transactional(async (em) => {
      if (field.unique) await dropUniqueIndex(em, field);
      await em.execute(
        `update "${tableOf(field)}" set "fields" = "fields" - ?::text where "account_id" = ? and "livemode" = ? and ("fields" -> ?::text) is not null`,
        [field.key, accountId, livemode, field.key],
      );
      em.remove(field);
    });
    return field.id;
  }

  /** The object's built-in names as REST writes them (contact_email, owner_id…), and object and fields. */
  private builtInNames(objectType: FieldObject): Set<string> {
    const meta = this.em.getMetadata().find(ENTITY_OF[objectType]);
    return new Set([
      'object',
      'fields',
      ...(meta ? meta.props.map((prop) => camelToSnake(prop.name)) : []),
      ...(meta ? Object.keys(meta.properties) : []),
      // Names every JavaScript object answers to (constructor…): a value under one would pass for the object's own.
      ...Object.getOwnPropertyNames(Object.prototype),
    ]);
  }
}

/**
 * The options as sent, checked against those the field holds: values distinct, and every value
 * held before still there (records may hold it: rename or archive it instead).
 */
function optionsOf(given: FieldOptionInput[], held: FieldOption[]): FieldOption[] {
  if (given.length === 0) throw new ApiError('parameter_invalid', 'options must have at least one option', { param: 'options' });
  const values = given.map((option) => option.value);
  const repeated = values.find((value, i) => values.indexOf(value) !== i);
  if (repeated) throw new ApiError('parameter_invalid', `options has the value ${repeated} twice`, { param: 'options' });
  const dropped = held.find((option) => !values.includes(option.value));
  if (dropped) {
    throw new ApiError('parameter_invalid', `options must keep the value ${dropped.value}: records may hold it (archive it instead)`, { param: 'options' });
  }
  return given.map((option) => Object.assign(new FieldOption(), { value: option.value, label: option.label, archived: option.archived ?? false }));
}
