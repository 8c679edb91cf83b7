import pino, { DestinationStream, Logger } from 'pino';

export type { Logger };

/**
 * Paths censored in every log line: Authorization and Cookie headers, keys, tokens, passwords and
 * secrets wherever a log object would carry them. `credentials` (integration secrets) is covered at the top
 * level, one level down (`input.credentials`) and two (`variables.input.credentials`).
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
  'authorization',
  '*.authorization',
  'cookie',
  '*.cookie',
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'apiKey',
  'credentials',
  '*.credentials',
  '*.*.credentials',
  '*.credentialsEncrypted',
  '*.apiKey',
];

/**
 * Structured JSON logs. Secrets never reach them: keys, passwords and credentials are redacted by
 * path. `destination` defaults to stdout; tests pass a stream to read what was logged.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sales-pipeline-api' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}
