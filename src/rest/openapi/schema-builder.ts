import {
  GraphQLInputField,
  GraphQLInputObjectType,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { JsonSchema, schemaRefinement } from '../../common/json-schema';
import { NOT_NULL_EXTENSION } from '../../common/validation';
import { camelToSnake } from '../case-mapping';
import { restFields } from '../selection';
import { ConstraintFacts, constraintsOf, inputClass } from './constraints';

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** A GraphQL description as REST readers need it: the fields it names (`contactEmail`) in their REST names (`contact_email`). */
export const restText = (text: string): string => text.replace(/\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g, camelToSnake);

export const withDescription = (schema: JsonSchema, ...descriptions: Array<string | null | undefined>): JsonSchema => {
  const text = descriptions.filter(Boolean).join(' ');
  return text ? { ...schema, description: restText(text) } : schema;
};

const NOT_NULL_NOTE = 'Cannot be null: leave it out to keep the current value.';

/** `{type: x}` → `{type: [x, "null"]}`; a reference or enum becomes `anyOf` with null. */
function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && !schema.enum) return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * Narrows a field's schema by its validators' keywords: on the value (inside `anyOf` with null, or
 * beside a `$ref`), on each item of a list. A nullable value keeps null in an enum.
 */
export function narrow(schema: JsonSchema, value: JsonSchema, items: JsonSchema = {}): JsonSchema {
  if (Array.isArray(schema.anyOf)) {
    const [first, ...rest] = schema.anyOf as JsonSchema[];
    return { ...schema, anyOf: [narrow(first, value, items), ...rest] };
  }
  const { description, type, ...keywords } = value;
  void description;
  const result: JsonSchema = { ...schema, ...keywords };
  if (type === 'integer' && schema.type !== undefined) {
    result.type = Array.isArray(schema.type) ? schema.type.map((t) => (t === 'number' ? 'integer' : t)) : schema.type === 'number' ? 'integer' : schema.type;
    if (result.format === 'float') delete result.format;
  }
  if (Array.isArray(keywords.enum) && Array.isArray(schema.type) && schema.type.includes('null')) result.enum = [...keywords.enum, null];
  if (Object.keys(items).length) result.items = narrow(schema.items as JsonSchema, items);
  return result;
}

export class SchemaBuilder {
  readonly components: Record<string, JsonSchema> = {};

  constructor(private readonly facts: ConstraintFacts = {}) {}

  /** A `#/components/schemas/…` reference's schema (built already: references are made by building). */
  readonly resolve = (reference: string): JsonSchema => this.components[reference.split('/').pop()!];

  /** The JSON schema of a GraphQL type; named enums, inputs and objects go to components. */
  of(type: GraphQLType, orNull = true): JsonSchema {
    if (isNonNullType(type)) return this.of(type.ofType, false);
    const schema = isListType(type) ? { type: 'array', items: this.of(type.ofType) } : this.named(type);
    return orNull ? nullable(schema) : schema;
  }

  private named(type: GraphQLNamedType): JsonSchema {
    if (isEnumType(type)) return this.component(type, () => ({ type: 'string', enum: type.getValues().map((v) => v.value as string) }));
    if (isInputObjectType(type)) return this.component(type, () => this.input(type));
    if (isObjectType(type)) return this.component(type, () => this.object(type));
    switch (type.name) {
      case 'Int':
        return { type: 'integer', format: 'int32' };
      case 'Float':
        return { type: 'number' };
      case 'Boolean':
        return { type: 'boolean' };
      case 'DateTimeISO':
        return { type: 'string', format: 'date-time' };
      case 'JSONObject':
        return { type: 'object', additionalProperties: true };
      default:
        return { type: 'string' };
    }
  }

  private component(type: GraphQLNamedType, build: () => JsonSchema): JsonSchema {
    if (!this.components[type.name]) {
      this.components[type.name] = {}; // placeholder first: types may refer to themselves
      this.components[type.name] = withDescription(build(), type.description);
    }
    return { $ref: `#/components/schemas/${type.name}` };
  }

  /**
   * A field of an input type: its GraphQL type narrowed by its class's validators, nullable unless
   * required or NotNull (or a query parameter: `takesNull` false). `description` adds the
   * validators' own notes to the field's.
   */
  field(type: GraphQLInputObjectType, field: GraphQLInputField, takesNull = true): { schema: JsonSchema; description?: string } {
    const notNull = field.extensions?.[NOT_NULL_EXTENSION] === true || !takesNull;
    const target = inputClass(type.name);
    const constraints = target ? constraintsOf(target, field.name, this.facts) : { value: {}, items: {} };
    const schema = narrow(this.of(field.type, !notNull), constraints.value, constraints.items);
    const notes = [field.description, constraints.value.description as string | undefined, notNull && takesNull ? NOT_NULL_NOTE : undefined];
    const description = notes.filter(Boolean).join(' ');
    return { schema, ...(description ? { description: restText(description) } : {}) };
  }

  /**
   * A request body: the input type's fields in snake_case, non-null ones required, nothing else
   * accepted. Optional fields take null (on an update, null clears them), except NotNull ones.
   */
  input(type: GraphQLInputObjectType): JsonSchema {
    const fields = Object.values(type.getFields());
    const property = (f: GraphQLInputField) => {
      const { schema, description } = this.field(type, f);
      return withDescription(schema, description);
    };
    const properties = Object.fromEntries(fields.map((f) => [camelToSnake(f.name), property(f)]));
    const required = fields.filter((f) => isNonNullType(f.type)).map((f) => camelToSnake(f.name));
    const schema = { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
    const target = inputClass(type.name);
    const refine = target && schemaRefinement(target);
    return refine ? refine(schema, this.resolve) : schema;
  }

  /** A response object exactly as REST shows it: every REST field, always present (null when empty). */
  object(type: GraphQLObjectType): JsonSchema {
    const fields = restFields(type);
    const properties = Object.fromEntries(fields.map((f) => [camelToSnake(f.name), withDescription(this.of(f.type), f.description)]));
    return { type: 'object', properties, required: fields.map((f) => camelToSnake(f.name)) };
  }
}
