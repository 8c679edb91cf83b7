import { ArrayMaxSize, IsOptional, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { type JsonSchema, RefineSchema, type SchemaRefinement } from '../../common/json-schema';
import { PageInput } from '../../common/page.input';
import { NOT_BLANK, NotNull, rules } from '../../common/validation';
import { FieldObject, FieldType, MAX_OPTIONS, OPTION_TYPES, UNIQUE_TYPES } from './field.entity';

/** The `fields` input of leads and deals: values by key, checked against the definitions by the services (field-values.ts). */
export const FieldValuesInput = () =>
  rules(
    Field(() => GraphQLJSONObject, {
      nullable: true,
      description:
        "Custom field values by key (GET /v1/fields), each checked by its field's type; a null value clears its key. On an update only the keys sent change.",
    }),
    IsOptional(),
  );

/** A field's key and an option's value: snake_case, as records and filters name them. */
export const SNAKE_KEY = /^[a-z][a-z0-9_]{0,39}$/;
const SNAKE_MESSAGE = '$property must be snake_case: a lowercase letter, then lowercase letters, digits or _ (at most 40)';

@InputType({ description: 'An option of a select: value (stored, immutable) and label (shown).' })
export class FieldOptionInput {
  @Field({ description: 'snake_case, unique among the options; what records store.' })
  @Matches(SNAKE_KEY, { message: SNAKE_MESSAGE })
  value!: string;

  @Field()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  label!: string;

  @Field(() => Boolean, { nullable: true, description: 'Default false. An archived option stays on the records that hold it.' })
  @IsOptional()
  archived?: boolean;
}

/** What create and update share. */
@InputType()
abstract class FieldShared {
  @Field(() => [FieldOptionInput], {
    nullable: true,
    description: `select and multi_select: 1 to ${MAX_OPTIONS} options. On update the whole list: every stored value stays (rename or archive it instead).`,
  })
  @IsOptional()
  @ArrayMaxSize(MAX_OPTIONS, { message: `$property must have at most ${MAX_OPTIONS} options` })
  @ValidateNested({ each: true })
  options?: FieldOptionInput[];

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(500, { message: '$property must be at most 500 characters' })
  description?: string | null;
}

const NONE: JsonSchema = { anyOf: [{ type: 'null' }, { type: 'array', maxItems: 0 }] };
const NOT_UNIQUE: JsonSchema = { anyOf: [{ type: 'null' }, { const: false }] };
/**
 * The type decides the rest: a select or multi_select has options (and is never unique); the
 * types that may be unique have no options; the others have neither.
 */
const rulesByType: SchemaRefinement = (schema) => {
  const options = (schema.properties as Record<string, JsonSchema>).options;
  const { anyOf, ...rest } = options as JsonSchema & { anyOf?: JsonSchema[] };
  const list = anyOf?.find((branch) => branch.type === 'array') ?? rest;
  const others = Object.values(FieldType).filter((type) => !OPTION_TYPES.includes(type) && !UNIQUE_TYPES.includes(type));
  return {
    ...schema,
    oneOf: [
      {
        title: 'with options',
        required: ['options'],
        properties: { type: { enum: [...OPTION_TYPES] }, options: { ...list, type: 'array', minItems: 1 }, unique: NOT_UNIQUE },
      },
      { title: 'may be unique', properties: { type: { enum: [...UNIQUE_TYPES] }, options: NONE } },
      { title: 'other types', properties: { type: { enum: others }, options: NONE, unique: NOT_UNIQUE } },
    ],
  };
};

@InputType({ description: 'Defines a custom field on leads or deals (at most 100 per object in each mode).' })
@RefineSchema(rulesByType)
export class FieldCreateInput extends FieldShared {
  @Field(() => FieldObject)
  objectType!: FieldObject;

  @Field({ description: 'snake_case, never a built-in field of the object; immutable.' })
  @Matches(SNAKE_KEY, { message: SNAKE_MESSAGE })
  key!: string;

  @Field()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  label!: string;

  @Field(() => FieldType)
  type!: FieldType;

  @Field(() => Boolean, { nullable: true, description: 'Default false: records are created with a value, which cannot be cleared.' })
  @IsOptional()
  required?: boolean;

  @Field(() => Boolean, { nullable: true, description: 'Default false; text, number, email, phone, url and date fields only. Immutable.' })
  @IsOptional()
  unique?: boolean;
}

@InputType({ description: 'A partial update: only the fields sent change. key, object_type, type and unique are immutable.' })
export class FieldUpdateInput extends FieldShared {
  @Field(() => String, { nullable: true })
  @NotNull()
  @Length(1, 100, { message: '$property must be 1 to 100 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  label?: string;

  @Field(() => Boolean, { nullable: true, description: 'Records created afterwards need a value; existing ones keep theirs (or none) until changed.' })
  @NotNull()
  required?: boolean;
}

@InputType({ description: 'Pagination and filters for listing custom fields, newest first.' })
export class FieldListInput extends PageInput {
  @Field(() => FieldObject, { nullable: true })
  @IsOptional()
  objectType?: FieldObject;
}
