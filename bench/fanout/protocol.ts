/** Messages between the bench (parent) and a fan-out client process (bench/fanout/worker.ts). */

/**
 * The subscriber kinds: REST SSE (`GET /v1/payment_intents/{id}/events`), and GraphQL's
 * `paymentIntentUpdated(id)` over graphql-ws (one WebSocket each), over SSE on POST /graphql
 * (graphql-sse, distinct connections) and over Apollo's multipart HTTP protocol.
 */
export type SubscriberKind = 'sse' | 'ws' | 'graphqlSse' | 'multipart';
export const SUBSCRIBER_KINDS: readonly SubscriberKind[] = ['sse', 'ws', 'graphqlSse', 'multipart'];
export interface WorkerTarget {
  /** Gateway base URL, e.g. http://127.0.0.1:41234 */
  gatewayUrl: string;
  sk: string;
  /** The payments this worker watches and triggers (disjoint between workers). */
  payments: string[];
}

export type ParentMessage =
  | ({ type: 'init' } & WorkerTarget)
  /** Open `perPayment` subscribers of `kind` on each payment; answer `connected` once each sent its snapshot. */
  | { type: 'connect'; kind: SubscriberKind; perPayment: number; parallel: number }
  /**
   * After `offsetMs`, cancel each payment in turn, one every `intervalMs`; answer `result` once every
   * subscriber heard its payment's cancellation (or after `timeoutMs`).
   */
  | { type: 'trigger'; offsetMs: number; intervalMs: number; timeoutMs: number }
  | { type: 'close' };

export interface TriggerResult {
  type: 'result';
  /** Per kind, ms from just before each cancel request was sent until each subscriber received the event. */
  latencies: Record<SubscriberKind, number[]>;
  /** Per kind, the subscribers that did not hear their payment's cancellation in time. */
  missed: Record<SubscriberKind, number>;
  /** Wall-clock ms from each intent's `updated_at` (written with the change) to each receipt. */
  sinceChange: number[];
  /** ms of the cancel requests themselves (request sent -> response read). */
  trigger: number[];
  triggerErrors: number;
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'connected'; kind: SubscriberKind; open: number; failed: number; firstError?: string }
  | TriggerResult
  | { type: 'error'; message: string };
