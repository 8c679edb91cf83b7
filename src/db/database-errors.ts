import {
  ConnectionException,
  DriverException,
  ForeignKeyConstraintViolationException,
  NotFoundError,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import { ApiError } from '../common/api-error';
import { customFieldOfIndex } from './custom-field-index';

/** What a named unique constraint means to a client, when one is violated (409 resource_conflict). */
export interface ConflictMeaning {
  /** The parameter, in GraphQL naming (REST shows it in snake_case). */
  param: string;
  message: string;
}

/** Meanings by constraint name: declared by the module that owns each (`conflicts`), gathered by the composition root (src/app/modules.ts, CONFLICTS). */
export type ConflictMeanings = ReadonlyMap<string, ConflictMeaning>;

const NO_CONFLICTS: ConflictMeanings = new Map();

const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03']);

/**
 * Text PostgreSQL cannot store (U+0000 in text or json: 22021 character_not_in_repertoire, 22P05
 * untranslatable_character). A client sent it; the REST adapter refuses it earlier, naming the
 * parameter, and this keeps any other path from answering 500.
 */
const UNSTORABLE_TEXT_CODES = new Set(['22021', '22P05']);

/**
 * A statement that ran past statement_timeout (57014 query_canceled) or a transaction left idle
 * past idle_in_transaction_session_timeout (25P03, its connection closed): the request held the
 * database too long (DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS).
 */
const TIMED_OUT_CODES = new Set(['57014', '25P03']);

export function isDatabaseTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TIMED_OUT_CODES.has(code);
}

/**
 * True for errors that mean the database is unreachable rather than that the request was wrong.
 * pg's "Client has encountered a connection error" and knex's "Transaction query already complete"
 * are what a query meets on a connection (or in a transaction) that the outage already broke.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionException) return true;
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error as { message?: unknown } | null)?.message;
  return (
    (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) ||
    (typeof message === 'string' &&
      /Connection terminated|connect ECONNREFUSED|Timeout acquiring a connection|the database system is (starting|shutting) up|Client has encountered a connection error|Client was closed and is not queryable|Transaction query already complete/i.test(
        message,
      ))
  );
}

/** Deadlock (40P01), serialization failure (40001), lock not available (55P03): the same work may succeed when tried again. */
const CONTENTION_CODES = new Set(['40P01', '40001', '55P03']);

/**
 * True when the database, not the work, failed: an outage, a statement stopped by its timeout on a
 * busy machine, or contention. Background work (agent runs) tries again later rather than record a
 * failure; a request answers 503 and its client retries.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return isDatabaseTimeout(error) || isDatabaseUnavailable(error) || (typeof code === 'string' && CONTENTION_CODES.has(code));
}

/**
 * The one place where database failures become API errors: unique violations are conflicts (what
 * each means, from `conflicts`), foreign-key violations point at a missing resource, an unreachable
 * database is 503. Returns undefined for anything it does not recognise (a bug: the caller answers 500).
 */
export function mapDatabaseError(error: unknown, conflicts: ConflictMeanings = NO_CONFLICTS): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof UniqueConstraintViolationException) {
    const constraint = (error as unknown as { constraint?: string }).constraint ?? '';
    const field = customFieldOfIndex(constraint);
    if (field) {
      return new ApiError('resource_conflict', `Another ${field.object} in this mode already has this value of fields[${field.key}], a unique field`, {
        param: `fields.${field.key}`,
      });
    }
    const meaning = conflicts.get(constraint);
    return new ApiError('resource_conflict', meaning?.message ?? 'The resource conflicts with an existing one', {
      param: meaning?.param,
    });
  }
  if (error instanceof ForeignKeyConstraintViolationException) {
    return new ApiError('resource_missing', 'A referenced resource does not exist');
  }
  if (error instanceof DriverException && UNSTORABLE_TEXT_CODES.has(String((error as { code?: unknown }).code))) {
    return new ApiError('parameter_invalid', 'Text values must not contain the character U+0000');
  }
  if (isDatabaseTimeout(error)) {
    return new ApiError(
      'service_unavailable',
      'The request took too long in the database and was stopped; retry, or ask for less (a smaller page, narrower filters)',
    );
  }
  if (error instanceof NotFoundError) {
    return new ApiError('resource_missing', 'No such resource');
  }
  if (isDatabaseUnavailable(error) || (error instanceof DriverException && isDatabaseUnavailable(error))) {
    return new ApiError('service_unavailable', 'The database is unavailable; retry shortly');
  }
  return undefined;
}
