import express, { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/api-error';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Far more than any input of the API needs (a proposal's line item sits 3 levels down, 5 in a GraphQL body). */
export const MAX_BODY_DEPTH = 64;

// strict: false, so a body that is valid JSON but not an object (`"x"`, `1`, `null`) is parsed and
// then refused for what it is, not called invalid JSON.
const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/** The refusal of a JSON body that is not an object (REST takes objects only; /graphql also takes arrays, as batches it refuses itself). */
export function bodyNotAnObject(value: unknown): ApiError {
  return new ApiError('parameter_invalid', `The request body must be a JSON object, not ${kindOf(value)}`);
}

/**
 * True when arrays and objects nest deeper than `max`. Walked with a stack of its own, because the
 * code that later walks a body (the NUL guard, Idempotency-Key's canonical JSON) recurses, and a
 * 1 MiB body can nest half a million levels: that would overflow the call stack, a 500.
 */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** `application/json`, alone or with a UTF-8 charset: what every client of the API sends. */
const PLAIN_JSON = /^application\/json(?:\s*;\s*charset="?utf-8"?)?\s*$/i;

const invalidJson = () => new ApiError('invalid_json', 'The request body is not valid JSON');

/** A plain JSON body's bytes as body-parser reads them: invalid UTF-8 becomes U+FFFD, a leading byte order mark is dropped. */
function parseBytes(req: Request, bytes: Buffer): ApiError | undefined {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    req.body = JSON.parse(text);
  } catch {
    return invalidJson();
  }
  return undefined;
}

/**
 * The common body read directly, without body-parser's content-type parse, decoder and stream bookkeeping:
 * plain JSON, no Content-Encoding, a Content-Length within the limit (anything else goes to body-parser). Node's
 * parser delivers exactly Content-Length bytes or aborts, so the count is checked only as body-parser does. A
 * body Node has already buffered whole (`complete`) is taken with one `read()`, without flowing mode's ticks.
 */
function readPlainJson(req: Request, length: number, done: (error: ApiError | undefined) => void): void {
  if (req.complete && req.readableLength === length) {
    const bytes = req.read() as Buffer | null;
    if (bytes?.length === length) return done(parseBytes(req, bytes));
    return done(invalidJson());
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (error: ApiError | undefined) => {
    if (finished) return;
    finished = true;
    req.off('data', onData).off('end', onEnd).off('error', onFailure).off('aborted', onFailure);
    done(error);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    chunks.push(chunk);
  };
  const onEnd = () => {
    if (received !== length) return finish(invalidJson());
    finish(parseBytes(req, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)));
  };
  const onFailure = () => finish(invalidJson());
  req.on('data', onData).on('end', onEnd).on('error', onFailure).on('aborted', onFailure);
}

/**
 * CONTRACT §1: POST and PUT bodies are JSON. Another content type is 415, malformed JSON 400
 * `invalid_json`, more than 1 MiB 413. A POST with no body at all (actions such as /deploy) is fine.
 * With `emptyBody`, a request without one gets `{}` as its body: Apollo's middleware answers a
 * bare 500 unless `req.body` is present, and Express 5 leaves it unset when nothing was parsed.
 * REST reads a missing body as empty itself, so its requests are spared adding the property to
 * every request object (0.66 % of a single read's profile samples, docs/benchmark.md).
 */
export function jsonBody(onError: (res: Response, error: ApiError) => void, options: { emptyBody?: boolean } = {}) {
  const emptyBody = options.emptyBody === true;
  /** What every parsed body must be: an object (or an array, which /graphql refuses itself), not too deep. */
  const checkParsed = (req: Request, res: Response, next: NextFunction): void => {
    if (req.body === null || typeof req.body !== 'object') return onError(res, bodyNotAnObject(req.body));
    if (!nestsDeeperThan(req.body, MAX_BODY_DEPTH)) return next();
    return onError(res, new ApiError('invalid_json', `The request body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`));
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    // The method first: a GET or HEAD never has its headers looked up (req.get lower-cases each name).
    const bodiless = req.method === 'GET' || req.method === 'HEAD';
    const length = Number(req.headers['content-length'] ?? 0);
    if (bodiless || !(length > 0 || req.headers['transfer-encoding'] !== undefined)) {
      if (emptyBody) req.body ??= {};
      return next();
    }
    const contentType = req.headers['content-type'];
    if (
      length <= MAX_BODY_BYTES &&
      req.headers['transfer-encoding'] === undefined &&
      req.headers['content-encoding'] === undefined &&
      contentType !== undefined &&
      PLAIN_JSON.test(contentType)
    ) {
      return readPlainJson(req, length, (error) => (error ? onError(res, error) : checkParsed(req, res, next)));
    }
    if (!req.is('application/json') && !req.is('application/*+json')) {
      return onError(res, new ApiError('unsupported_media_type', `Content-Type must be application/json, got ${req.get('content-type') ?? 'none'}`));
    }
    parseJson(req, res, (error?: unknown) => {
      if (!error) return checkParsed(req, res, next);
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') {
        return onError(res, new ApiError('request_too_large', `The request body must be at most ${MAX_BODY_BYTES} bytes`));
      }
      if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
        return onError(res, new ApiError('unsupported_media_type', 'The body must be UTF-8 JSON'));
      }
      return onError(res, invalidJson());
    });
  };
}
