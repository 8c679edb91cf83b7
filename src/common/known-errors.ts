import { unwrapResolverError } from '@apollo/server/errors';
import type { ValidationError } from 'class-validator';
import { ArgumentValidationError } from 'type-graphql';
import { ConflictMeanings, mapDatabaseError } from '../db/database-errors';
import { ApiError } from './api-error';

/** The first failed constraint, walking into nested inputs, as a dotted param and a message. */
function firstViolation(errors: ValidationError[], prefix = ''): { param: string; message: string } | undefined {
  for (const error of errors) {
    const param = prefix ? `${prefix}.${error.property}` : error.property;
    const message = error.constraints ? Object.values(error.constraints)[0] : undefined;
    // class-validator names the property alone (`unitPrice must be…`); name the whole path, which
    // REST then renders in its own names (`line_items[0][unit_price] must be…`).
    if (message) return { param, message: message.startsWith(`${error.property} `) ? `${param}${message.slice(error.property.length)}` : message };
    const nested = firstViolation(error.children ?? [], param);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * What an error thrown by a resolver, a service or the database means to a client, or undefined
 * for a bug: ours as they are, a failed input validation as 400 naming the parameter, database
 * failures through mapDatabaseError (with what the modules' unique constraints mean). Requests
 * (formatError) and background work (agent runs, sync runs) read errors alike.
 */
export function toApiError(error: unknown, conflicts?: ConflictMeanings): ApiError | undefined {
  const original = unwrapResolverError(error);
  if (original instanceof ApiError) return original;
  if (original instanceof ArgumentValidationError) {
    const violation = firstViolation(original.extensions.validationErrors as ValidationError[]);
    return new ApiError('parameter_invalid', violation?.message ?? 'Invalid input', { param: violation?.param });
  }
  return mapDatabaseError(original, conflicts);
}
