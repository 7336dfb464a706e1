import { PgwError } from '@pgw/client';
import { printable } from './printable';

/** Exit codes scripts can branch on (contract decisions, "Command-line tool pgw"). */
export const EXIT = { ok: 0, api: 1, usage: 2 } as const;

/** A mistake in how pgw was called (bad flag value, no key, unknown scenario): exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A failure the gateway reported outside REST (a GraphQL error, a WebSocket closed with a code) as the
 * same PgwError the REST client throws, so that one path prints the stable `code` and exits 1.
 */
export function apiFailure(code: string, message: string, requestId: string | null = null): PgwError {
  return new PgwError({ status: 0, code, message, requestId });
}

/** Prints what went wrong on stderr and returns the exit code for it. */
export function reportFailure(err: unknown, write: (line: string) => void): number {
  if (err instanceof UsageError) {
    write(`error: ${err.message}`);
    return EXIT.usage;
  }
  if (err instanceof PgwError) {
    // The code first, alone on its token, so that scripts can grep it; the request id is for support.
    write(`error: ${printable(err.code)}: ${printable(err.message)}${err.requestId ? ` (request ${printable(err.requestId)})` : ''}`);
    return EXIT.api;
  }
  write(`error: ${printable(err instanceof Error ? err.message : String(err))}`);
  return EXIT.api;
}
