import { Embeddable, Embedded, Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';

/** What a custom field is defined on (issue 68). */
export enum FieldObject {
  lead = 'lead',
  deal = 'deal',
}
registerEnumType(FieldObject, { name: 'FieldObject', description: 'The object a custom field is defined on: lead or deal.' });

/** What a custom field holds; each value is checked by its type (src/modules/fields/field-values.ts). */
export enum FieldType {
  text = 'text',
  long_text = 'long_text',
  number = 'number',
  money = 'money',
  date = 'date',
  datetime = 'datetime',
  boolean = 'boolean',
  select = 'select',
  multi_select = 'multi_select',
  url = 'url',
  email = 'email',
  phone = 'phone',
  member = 'member',
}
registerEnumType(FieldType, {
  name: 'FieldType',
  description:
    'text (up to 1,000 characters), long_text (up to 65,535), number, money (major units, up to 2 decimals), date (YYYY-MM-DD), datetime (ISO 8601, stored in UTC), boolean, select (an option value), multi_select (a list of option values), url (http or https), email, phone, member (an active member, usr_…).',
});

/** The types whose values may be unique within the account and mode. */
export const UNIQUE_TYPES: readonly FieldType[] = [FieldType.text, FieldType.number, FieldType.email, FieldType.phone, FieldType.url, FieldType.date];
/** The types with options. */
export const OPTION_TYPES: readonly FieldType[] = [FieldType.select, FieldType.multi_select];

/** The most fields per object, per account and mode. */
export const MAX_FIELDS_PER_OBJECT = 100;
export const MAX_OPTIONS = 100;

const EMBEDDED_VALUE = 0;

/** An option of a select: `value` is what records store (immutable), `label` what people read (renamable). */
@ObjectType({ simpleResolvers: true, description: 'An option of a select or multi_select field.' })
@Embeddable()
export class FieldOption {
  @Field({ complexity: EMBEDDED_VALUE, description: 'What records store: snake_case, immutable.' })
  @Property({ type: 'text' })
  value!: string;

  @Field({ complexity: EMBEDDED_VALUE, description: 'What people read; may be renamed.' })
  @Property({ type: 'text' })
  label!: string;

  @Field({ complexity: EMBEDDED_VALUE, description: 'An archived option is no longer offered nor accepted in a change; records that hold it keep it.' })
  @Property({ type: 'boolean' })
  archived: boolean = false;
}

/**
 * A custom field of leads or deals in one account and mode (a test key defines test mode's
 * fields). Values live in the record's `fields` (jsonb) under `key`; a unique field has a unique
 * index of its own over that key (src/modules/fields/field-indexes.ts).
 */
@ObjectType({ simpleResolvers: true, description: 'A custom field of leads or deals: its values travel in the record’s fields object under its key.' })
@Entity({ tableName: 'custom_fields' })
@Unique({ name: 'custom_fields_key_unique', properties: ['account', 'livemode', 'objectType', 'key'] })
@Index({ name: 'custom_fields_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
export class CustomField extends TenantEntity<'object' | 'options' | 'required' | 'unique' | 'description'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('fld');

  @Field({ description: 'Always "field".' })
  get object(): 'field' {
    return 'field';
  }

  @Field(() => FieldObject, { description: 'The object it is defined on: lead or deal. Immutable.' })
  @Enum({ items: () => FieldObject })
  objectType!: FieldObject;

  @Field({ description: 'snake_case, unique per object, immutable: the name of the value in fields.' })
  @Property({ type: 'text' })
  key!: string;

  @Field()
  @Property({ type: 'text' })
  label!: string;

  @Field(() => FieldType, { description: 'Immutable.' })
  @Enum({ items: () => FieldType })
  type!: FieldType;

  @Field(() => [FieldOption], { description: 'The options of a select or multi_select, in order; empty for other types.' })
  @Embedded(() => FieldOption, { array: true })
  options: FieldOption[] = [];

  @Field({ description: 'A record is created with a value, and the value cannot be cleared.' })
  @Property({ type: 'boolean' })
  required: boolean = false;

  @Field({ description: 'No two records of the object (in the account and mode) hold the same value. Immutable.' })
  @Property({ type: 'boolean' })
  unique: boolean = false;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null = null;
}
