import type { PaymentRecord } from '../domain/payments/paymentModel';
import { readPaymentById, reservePaymentNumber } from '../domain/payments/paymentService';
import type { OperationId } from './contract';

/**
 * What an operation's handler finds already started when it runs (`ctx.prefetched`), declared here
 * per operation, typed, and nowhere else. Why: each sequential database round trip of a request is a
 * step, shared with the requests at the same step (src/db/batching.ts); work started beside another
 * step is one step fewer. Two moments, one per operation:
 * - `beforeClaim`, on idempotent operations: beside the Idempotency-Key's claim, once the caller has
 *   authenticated. Only reads and reservations harmless when wasted (the claim finds an answer to
 *   replay, or the body is invalid).
 * - `beforeCount`: beside the key's rate-limit count (admission starts it, in admit.ts `authenticate`,
 *   for a key this process knows and did not refuse last time). Only reads keyed by the
 *   request's own path, whose result the handler checks as it would its own read (the payment's
 *   account against the caller's) and uses only once the count has let the request through.
 */
export interface Prefetched {
  /** The new payment's number: one not used is a gap in the numbers, which they may have. */
  createPaymentIntent: Promise<number>;
  /** The payment by the path's id, whatever its account. */
  getPaymentIntent: Promise<PaymentRecord | null>;
}

export type PrefetchedOf<K> = K extends keyof Prefetched ? Prefetched[K] : never;

const beforeClaim: { [K in keyof Prefetched]?: () => Prefetched[K] } = {
  createPaymentIntent: reservePaymentNumber,
};

const beforeCount: { [K in keyof Prefetched]?: (params: Record<string, unknown>) => Prefetched[K] | undefined } = {
  getPaymentIntent: (params) => (typeof params.id === 'string' ? readPaymentById(params.id) : undefined),
};

/** Starts the operation's work that goes beside its key's claim; undefined when it has none. */
export function startBeforeClaim<K extends OperationId>(operationId: K): PrefetchedOf<K> | undefined {
  const started = (beforeClaim as Partial<Record<OperationId, () => Promise<unknown>>>)[operationId]?.();
  // A replay never reads it: its failure must not go unhandled (the handler that reads it sees it).
  started?.catch(() => undefined);
  return started as PrefetchedOf<K> | undefined;
}

/** One request's read beside its count: `start` for admission to call (its `alongside`), then `read`. */
export interface BeforeCount<K extends OperationId> {
  start: () => void;
  read: PrefetchedOf<K> | undefined;
}

/** The operation's read beside the count for this request's path parameters; undefined when it has none. */
export function beforeCountOf<K extends OperationId>(operationId: K, params: Record<string, unknown>): BeforeCount<K> | undefined {
  const read = (beforeCount as Partial<Record<OperationId, (params: Record<string, unknown>) => Promise<unknown> | undefined>>)[operationId];
  if (!read) return undefined;
  const ahead: BeforeCount<K> = {
    read: undefined,
    start: () => {
      const started = read(params);
      // Not read when the request is refused or invalid: its failure must not go unhandled.
      started?.catch(() => undefined);
      ahead.read = started as PrefetchedOf<K> | undefined;
    },
  };
  return ahead;
}
