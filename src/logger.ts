import pino, { Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Secrets never reach them: keys, passwords and credentials are redacted by path. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'sales-pipeline-api' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.credentials', '*.apiKey'],
      censor: '[redacted]',
    },
  });
}
