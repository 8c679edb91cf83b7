import { MinDate, validate, ValidateBy, ValidateIf, ValidatorOptions } from 'class-validator';
import { ArgumentValidationError, ClassType } from 'type-graphql';
import { Extensions } from 'type-graphql';

/**
 * How every input is validated (type-graphql's buildSchema, and validInput below). type-graphql
 * turns on `skipMissingProperties` unless told otherwise, which skips every rule for a null value:
 * an update's `company: null` would then reach the database. Optional fields say so with
 * @IsOptional / @NotNull, so null and undefined are checked like any other value.
 */
export const VALIDATION_OPTIONS: ValidatorOptions = { forbidUnknownValues: false, stopAtFirstError: true, skipMissingProperties: false };

/**
 * An input built in code (an agent's action, the demo seed), checked exactly as a client's is:
 * the same rules and options, refused with the same error (400 parameter_invalid naming the field).
 */
export async function validInput<T extends object>(type: ClassType<T>, fields: Partial<T>): Promise<T> {
  const input = Object.assign(new type(), fields);
  const errors = await validate(input, VALIDATION_OPTIONS);
  if (errors.length) throw new ArgumentValidationError(errors);
  return input;
}

/** For @ValidateIf on partial updates: a field left out is skipped, a field sent as null is checked (and refused where null is not allowed). */
export const sentAndNotUndefined = (_: object, value: unknown): boolean => value !== undefined;

/** Several property decorators as one, for rules a create and an update input share. */
export function rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  // Applied last to first, as stacked decorators are, so the rules run in the order written.
  return (target, property) => [...decorators].reverse().forEach((decorate) => decorate(target, property));
}

/** A text made of spaces only would be stored empty. */
export const NOT_BLANK = /\S/;

/** PostgreSQL has no year 0 (ISO 8601's 0000 is 1 BC), so a filter time starts at year 1. */
export const FromYear1 = (): PropertyDecorator => MinDate(new Date('0001-01-01T00:00:00.000Z'), { message: '$property must be a time from the year 0001 on' });

/** The GraphQL extension that marks an update field as NotNull (read by nullArguments and the OpenAPI document). */
export const NOT_NULL_EXTENSION = 'notNull';

/**
 * The one rule for null in partial updates (REST and GraphQL alike): a field left out keeps its
 * value; null clears an optional field; a field the resource cannot be without (a lead's company,
 * a deal's value) is marked NotNull, and null for it is refused before validation with a message
 * that says so (src/graphql/null-arguments.ts), rather than whichever constraint meets null first.
 */
export function NotNull(): PropertyDecorator {
  return (target, property) => {
    Extensions({ [NOT_NULL_EXTENSION]: true })(target, property);
    ValidateIf(sentAndNotUndefined)(target, property);
  };
}

/** A host name alone (`acme.com`, `www.acme.co.uk:8443/about`): what people paste as a website. */
const BARE_HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+(?::\d{1,5})?(?:[/?#]\S*)?$/i;

/** True for an http(s) URL with a host, or a bare host name; never another scheme (`javascript:`, `data:`). */
export function isWebsite(value: unknown): boolean {
  if (typeof value !== 'string' || /\s/.test(value)) return false;
  if (!/^https?:\/\//i.test(value)) return BARE_HOST.test(value);
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A website a browser may open from our pages and clients' CRMs: http(s) only (see isWebsite). */
export function IsWebsite(): PropertyDecorator {
  return ValidateBy({
    name: 'isWebsite',
    validator: {
      validate: isWebsite,
      defaultMessage: () => '$property must be an http or https URL, or a domain such as acme.com',
    },
  });
}
