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
export const readAhead: Partial<Record<ExecutableOperationId, (params: Record<string, unknown>) => Promise<unknown> | undefined>> = {
  getPaymentIntent: (params) => (typeof params.id === 'string' ? readPaymentById(params.id) : undefined),
};
