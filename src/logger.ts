import pino from 'pino';

/**
 * Structured JSON logs. Secrets never reach them: request logging records method, path, status and
 * ids only, and the redact list is a second line of defence should a header or key object be logged.
 */
/**
 * Fields added to every line (src/tracing: the active span's trace_id and span_id); null, the default,
 * adds nothing and costs one test per line.
 */
// eslint-disable-next-line no-restricted-syntax -- one pino logger per process: its lines' fields are the process's
let mixinSource: (() => Record<string, unknown>) | null = null;

const NO_FIELDS: Record<string, unknown> = Object.freeze({});

export function setLogMixin(source: (() => Record<string, unknown>) | null): void {
  mixinSource = source;
}

export const logger = pino({
  mixin: () => (mixinSource ? mixinSource() : NO_FIELDS),
  // Pino's default merge writes the line's fields into the mixin's object: not into the shared empty one.
  mixinMergeStrategy: (fields: object, mixed: object) => (mixed === NO_FIELDS ? fields : Object.assign(mixed, fields)),
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' || process.env.VITEST ? 'silent' : 'info'),
  base: { service: 'payment-gateway' },
  redact: {
    paths: [
      'req.headers.authorization',
      'headers.authorization',
      'authorization',
      // Dashboard session cookies (pgw_session) are bearer secrets too.
      'req.headers.cookie',
      'headers.cookie',
      'cookie',
      'res.headers["set-cookie"]',
      'secret',
      '*.secret',
      'sk',
      '*.sk',
      'key_hash',
      '*.key_hash',
      // Client tokens (ct_test_…): logs name a token by its id (clientTokenId), never by its secret.
      'token',
      '*.token',
      'client_token',
      '*.client_token',
      'clientToken',
      '*.clientToken',
      'token_hash',
      '*.token_hash',
      'password',
      '*.password',
    ],
    // As the request log writes it (src/domain/logs/redact.ts, which also redacts the path of each line).
    censor: '[REDACTED]',
  },
  timestamp: pino.stdTimeFunctions.isoTime,
});

export type Logger = typeof logger;
