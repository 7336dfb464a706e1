import { readPaymentById } from '../domain/payments/payment.service';
import type { ExecutableOperationId } from './types';

/**
 * The first read of an operation, started beside the key's rate-limit count instead of after it, and
 * handed to its handler as `ctx.early`. Only reads keyed by the request's own path, whose result the
 * handler checks as it would its own read (the payment's account against the caller's) and uses only
 * once the count has let the request through and the input is valid. The count decides when
 * (countKeyAndAccountRequest): for a key this process already knows and did not refuse last time.
 *
 * Why: as with beforeClaim.ts, a request's database round trips one after the other are its steps,
 * each a command shared with the requests at the same step (src/db/batching.ts). A read by id was a
 * GET's second step; beside the count, a GET has one, and under load each command carries twice the
 * requests (bench/README.md, "Round 16").
 */
const reads: Partial<Record<ExecutableOperationId, (params: Record<string, unknown>) => Promise<unknown> | undefined>> = {
  getPaymentIntent: (params) => (typeof params.id === 'string' ? readPaymentById(params.id) : undefined),
};

/** One request's read ahead: `start` for the count to call (its `alongside`), then `early`, if it started. */
export interface ReadAhead {
  start: () => void;
  early: Promise<unknown> | undefined;
}

/** The operation's read ahead for this request's path parameters; undefined when the operation has none. */
export function readAheadOf(operationId: ExecutableOperationId, params: Record<string, unknown>): ReadAhead | undefined {
  const read = reads[operationId];
  if (!read) return undefined;
  const ahead: ReadAhead = {
    early: undefined,
    start: () => {
      ahead.early = read(params);
      // Not read when the request is refused or invalid: its failure must not go unhandled.
      ahead.early?.catch(() => undefined);
    },
  };
  return ahead;
}
