import type { PaymentRecord } from '../domain/payments/paymentModel';
import { readPaymentById, reservePaymentNumber } from '../domain/payments/paymentService';
import type { OperationId } from './contract';

/**
 * What an operation's handler finds already started when it runs (`ctx.prefetched`), declared here and
 * nowhere else: work started beside another round trip (the key's count, the Idempotency-Key's claim)
 * is one sequential step fewer. More: docs/decisions/notes/edge.md, "Reads started ahead".
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

/** A read admission may start beside the key's count: the operation it is for, and the parameters that key it. */
export interface ReadAhead {
  operationId: OperationId;
  params: Record<string, unknown>;
}

/** The read admission started (it rides on the request's Admission to the handler). */
export type StartedRead = { [K in keyof Prefetched]: { operationId: K; params: Record<string, unknown>; read: Prefetched[K] } }[keyof Prefetched];

/** Starts the operation's read beside the count, for these parameters; undefined when it has none. */
export function startBeforeCount(ahead: ReadAhead): StartedRead | undefined {
  const read = (beforeCount as Partial<Record<OperationId, (params: Record<string, unknown>) => Promise<unknown> | undefined>>)[ahead.operationId];
  const started = read?.(ahead.params);
  if (!started) return undefined;
  // Not read when the request is refused or invalid: its failure must not go unhandled.
  started.catch(() => undefined);
  return { operationId: ahead.operationId, params: ahead.params, read: started } as StartedRead;
}

/**
 * The read admission started, for the operation that runs with these parameters; undefined for any
 * other (a GraphQL request may run several operations, or the same one for another id).
 */
export function startedFor<K extends OperationId>(started: StartedRead | undefined, operationId: K, params: Record<string, unknown> | undefined): PrefetchedOf<K> | undefined {
  if (started?.operationId !== operationId) return undefined;
  for (const [name, value] of Object.entries(started.params)) if (params?.[name] !== value) return undefined;
  return started.read as PrefetchedOf<K>;
}
