import { reservePaymentNumber } from '../domain/payments/payment.service';
import type { ExecutableOperationId } from './types';

/**
 * Work an idempotent operation starts beside the claim of its Idempotency-Key instead of after it, handed
 * to its handler as `ctx.early`. Only reads and reservations that are harmless when wasted (the claim
 * finds an answer to replay, or the body is invalid), and only once the caller has authenticated.
 *
 * Why: a request's database round trips one after the other are its steps, and each step is a command
 * shared with the requests at the same step (src/db/batching.ts). One step fewer is a shorter request
 * and fuller commands: fewer commands per request under load (bench/README.md, "Round 14").
 */
export const beforeClaim: Partial<Record<ExecutableOperationId, () => Promise<unknown>>> = {
  // The new payment's number: one not used is a gap in the numbers, which they may have.
  createPaymentIntent: reservePaymentNumber,
};
