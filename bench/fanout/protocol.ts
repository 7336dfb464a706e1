/** Messages between the bench (parent) and a fan-out client process (bench/fanout/worker.ts). */
export interface WorkerTarget {
  /** Gateway base URL, e.g. http://127.0.0.1:41234 */
  gatewayUrl: string;
  sk: string;
  /** The payments this worker watches and triggers (disjoint between workers). */
  payments: string[];
}

export type ParentMessage =
  | ({ type: 'init' } & WorkerTarget)
  /** Open `perPayment` SSE streams on each payment; answer `connected` once every stream sent its snapshot. */
  | { type: 'connectSse'; perPayment: number; parallel: number }
  /** Open `perPayment` graphql-ws subscriptions (one WebSocket each) on each payment. */
  | { type: 'connectWs'; perPayment: number; parallel: number }
  /**
   * After `offsetMs`, cancel each payment in turn, one every `intervalMs`; answer `result` once every
   * subscriber heard its payment's cancellation (or after `timeoutMs`).
   */
  | { type: 'trigger'; offsetMs: number; intervalMs: number; timeoutMs: number }
  | { type: 'close' };

export interface TriggerResult {
  type: 'result';
  /** ms from just before each cancel request was sent until each subscriber received the event. */
  sse: number[];
  ws: number[];
  /** Wall-clock ms from each intent's `updated_at` (written with the change) to each receipt. */
  sinceChange: number[];
  /** ms of the cancel requests themselves (request sent -> response read). */
  trigger: number[];
  missedSse: number;
  missedWs: number;
  triggerErrors: number;
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'connected'; kind: 'sse' | 'ws'; open: number; failed: number; firstError?: string }
  | TriggerResult
  | { type: 'error'; message: string };
