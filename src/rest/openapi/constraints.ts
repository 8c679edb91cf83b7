import { getMetadataStorage as validationStorage, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { CurrencyCodes } from 'validator/lib/isISO4217';
import { getMetadataStorage as graphqlStorage } from 'type-graphql';
import type { InputClass, JsonSchema } from '../../common/json-schema';
import { METADATA_LIMITS } from '../../common/metadata';
import { WEBSITE_PATTERN } from '../../common/validation';
import type { EventCatalog } from '../../events/event-catalog';
import { WEBHOOK_URL_SHAPE } from '../../modules/webhooks/url-guard';

/**
 * The JSON Schema of what the validators enforce, read from the validators themselves: the
 * class-validator metadata of each type-graphql input class (its decorators, with their
 * arguments). Nothing here restates a limit: `@Length(1, 200)` is `minLength: 1, maxLength: 200`
 * because the decorator says 1 and 200. Every kind of constraint has an entry in CONSTRAINTS; one
 * without is an error when the document is built (and a unit test lists them all), so a new rule
 * cannot stay out of the document unnoticed.
 */

/** How one kind of constraint reads in JSON Schema: keywords for the value (or for each item with `each`). */
/** What the service defines in code that a constraint's keywords name (the event types, from the modules). */
export interface ConstraintFacts {
  events?: EventCatalog;
}

type Mapping = (constraints: readonly unknown[], facts: ConstraintFacts) => JsonSchema;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** An item list `a,b` of names, trimmed, empty items dropped, at least one name (eventTypeList): as a pattern. */
function commaListPattern(names: readonly string[]): string {
  const name = `(?:${names.map(escape).join('|')})`;
  return `^[\\s,]*${name}(?:\\s*,[\\s,]*${name})*[\\s,]*$`;
}

const SKIP: Mapping = () => ({});

/** Each class-validator constraint name (ValidateBy / registerDecorator `name`), or its type, mapped to JSON Schema. */
export const CONSTRAINTS: Record<string, Mapping> = {
  // Which values are validated at all: IsOptional / ValidateIf (null and leaving out are in the field's type and `required`).
  [ValidationTypes.CONDITIONAL_VALIDATION]: SKIP,
  // ValidateNested: the nested input type's own schema carries its rules.
  [ValidationTypes.NESTED_VALIDATION]: SKIP,
  // Already said by the GraphQL type (String, JSONObject).
  isString: () => ({ type: 'string' }),
  isObject: () => ({ type: 'object' }),
  isInt: () => ({ type: 'integer' }),
  min: ([min]) => ({ minimum: min }),
  max: ([max]) => ({ maximum: max }),
  isPositive: () => ({ exclusiveMinimum: 0 }),
  maxDecimals: ([digits]) => ({ multipleOf: 10 ** -(digits as number) }),
  isLength: ([min, max]) => ({ minLength: min, ...(max === undefined ? {} : { maxLength: max }) }),
  minLength: ([min]) => ({ minLength: min }),
  maxLength: ([max]) => ({ maxLength: max }),
  matches: ([pattern]) => {
    const regex = pattern as RegExp;
    if (regex.flags.replace(/[gu]/g, '')) throw new Error(`pattern /${regex.source}/${regex.flags}: JSON Schema patterns take no flags`);
    return { pattern: regex.source };
  },
  isEmail: () => ({ format: 'email' }),
  isIn: ([values]) => ({ enum: values }),
  isCalendarDate: () => ({ format: 'date' }),
  isISO4217CurrencyCode: () => ({ enum: [...CurrencyCodes].sort() }),
  // FromYear1: a date-time (the GraphQL type) from the year 0001 on.
  minDate: ([date]) => {
    if ((date as Date).toISOString() !== '0001-01-01T00:00:00.000Z') throw new Error('minDate: only the year-1 bound has a pattern');
    return { pattern: '^(?!0000)', description: 'From the year 0001 on.' };
  },
  arrayNotEmpty: () => ({ minItems: 1 }),
  arrayMinSize: ([min]) => ({ minItems: min }),
  arrayMaxSize: ([max]) => ({ maxItems: max }),
  arrayUnique: () => ({ uniqueItems: true }),
  // Custom validators of this service (src/common, src/events): each states its rule with the constraints it was given.
  isWebsite: () => ({ pattern: WEBSITE_PATTERN.source, description: 'An http(s) URL, or a host name such as acme.com.' }),
  isWebhookUrl: () => ({ format: 'uri', pattern: WEBHOOK_URL_SHAPE.source }),
  isSortKey: ([names]) => ({ enum: (names as string[]).flatMap((name) => [name, `-${name}`]) }),
  isEventType: ([options], { events }) => {
    if (!events) throw new Error('isEventType: the OpenAPI document lists event types from the event catalog (OpenApiOptions.events)');
    const names = events.names((options ?? {}) as { subscribable?: boolean });
    return (options as { commaList?: boolean } | undefined)?.commaList ? { pattern: commaListPattern(names) } : { enum: names };
  },
  isMetadata: ([options]) => {
    const { allowNullValues } = options as { allowNullValues: boolean };
    return {
      maxProperties: METADATA_LIMITS.keys,
      propertyNames: { minLength: 1, maxLength: METADATA_LIMITS.keyLength },
      additionalProperties: { type: allowNullValues ? ['string', 'null'] : 'string', maxLength: METADATA_LIMITS.valueLength },
    };
  },
};

/** The class of a type-graphql input type, by its GraphQL name. */
export function inputClass(name: string): InputClass | undefined {
  return graphqlStorage().inputTypes.find((type) => type.name === name)?.target;
}

const keyOf = (meta: ValidationMetadata) => (meta.type === ValidationTypes.CUSTOM_VALIDATION ? meta.name : meta.type) ?? meta.type;

/** Every constraint of a class's property (its parents' included), in declaration order. */
export function validationsOf(target: InputClass, property?: string): ValidationMetadata[] {
  return validationStorage()
    .getTargetValidationMetadatas(target, '', true, false)
    .filter((meta) => property === undefined || meta.propertyName === property);
}

/** The kinds of constraint a class uses that CONSTRAINTS has no entry for. */
export function unmappedConstraints(target: InputClass): string[] {
  return validationsOf(target)
    .map(keyOf)
    .filter((key) => !CONSTRAINTS[key]);
}

export interface PropertyConstraints {
  /** Keywords for the (non-null) value. */
  value: JsonSchema;
  /** Keywords for each item of a list (`each: true`). */
  items: JsonSchema;
}

/** The JSON Schema keywords of a property's validators. */
export function constraintsOf(target: InputClass, property: string, facts: ConstraintFacts = {}): PropertyConstraints {
  const result: PropertyConstraints = { value: {}, items: {} };
  for (const meta of validationsOf(target, property)) {
    const mapping = CONSTRAINTS[keyOf(meta)];
    if (!mapping) throw new Error(`${target.name}.${property}: no JSON Schema mapping for constraint "${keyOf(meta)}" (src/rest/openapi/constraints.ts)`);
    const keywords = mapping(meta.constraints ?? [], facts);
    const into = meta.each ? result.items : result.value;
    for (const [keyword, value] of Object.entries(keywords)) {
      if (value === undefined) continue;
      if (keyword === 'description' && into.description) into.description = `${String(into.description)} ${String(value)}`;
      else into[keyword] = value;
    }
  }
  return result;
}
