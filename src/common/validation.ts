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

const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';

/**
 * A website as people paste it: an http(s) URL with a host name, or a bare host name (`acme.com`,
 * `www.acme.co.uk:8443/about`); never another scheme (`javascript:`, `data:`), credentials or
 * spaces. One pattern, so the OpenAPI document states exactly this rule (src/rest/openapi/constraints.ts).
 */
export const WEBSITE_PATTERN = new RegExp(`^(?:(?:[hH][tT][tT][pP][sS]?)://${LABEL}(?:\\.${LABEL})*|${LABEL}(?:\\.${LABEL})+)(?::${PORT})?(?:[/?#]\\S*)?$`);

/** True for an http(s) URL with a host name, or a bare host name (WEBSITE_PATTERN). */
export function isWebsite(value: unknown): boolean {
  return typeof value === 'string' && WEBSITE_PATTERN.test(value);
}

/**
 * A JSON number with at most `digits` decimals as written (`String(value)`), as amounts (2) and
 * quantities and percentages (3) are stored exactly; in the document, `multipleOf: 10^-digits`.
 */
export function MaxDecimals(digits: number, message: string): PropertyDecorator {
  const exact = new RegExp(`^-?\\d+(?:\\.\\d{1,${digits}})?$`);
  return ValidateBy({
    name: 'maxDecimals',
    constraints: [digits],
    validator: { validate: (value: unknown) => typeof value === 'number' && exact.test(String(value)), defaultMessage: () => message },
  });
}

/** A day of the calendar as YYYY-MM-DD from 0001-01-01 (no 2026-02-30; years below 100 too, which validator's isISO8601 refuses). */
export function isCalendarDate(value: unknown): boolean {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year); // Date.UTC takes 0–99 as 1900–1999
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A calendar date (isCalendarDate); `format: date` in the document. */
export function IsCalendarDate(message: string): PropertyDecorator {
  return ValidateBy({ name: 'isCalendarDate', validator: { validate: isCalendarDate, defaultMessage: () => message } });
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
