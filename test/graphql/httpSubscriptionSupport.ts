import { createClient, type Client } from 'graphql-sse';
import type { TestAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';

/** GraphQL subscriptions over HTTP (SSE, multipart): what their test files share. */

export const UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot eventType paymentIntent { id status } } }';

export type UpdateResult = { data?: { paymentIntentUpdated: { snapshot: boolean; eventType: string | null; paymentIntent: { id: string; status: string } } }; errors?: any[] };

export const statusOf = (m: UpdateResult) => m.data?.paymentIntentUpdated.paymentIntent.status;

/** graphql-sse's client in distinct connections mode (its default), without retries so refusals show. */
export function sseClient(baseUrl: string, bearer: string | null): Client {
  return createClient({
    url: `${baseUrl}/graphql`,
    headers: (): Record<string, string> => (bearer ? { authorization: `Bearer ${bearer}` } : {}),
    retryAttempts: 0,
  });
}

/** A reference payment: PENDING until the sandbox says it was paid, then SUCCEEDED. */
export function referencePayment(acct: TestAccount): Promise<any> {
  return createPayment(acct.api, referenceBody());
}

export async function payReference(acct: TestAccount, payment: any): Promise<void> {
  const paid = await acct.api.post('/sandbox/simulate/reference_paid', { reference: payment.reference.number });
  if (paid.status >= 300) throw new Error(`reference_paid answered ${paid.status}: ${paid.text}`);
}

/** The test's own bound on a wait (no timing is asserted: only that it happens). */
export function within<T>(what: string, p: Promise<T>, ms = 20_000): Promise<T> {
  return Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))]);
}

/** How one subscription went: its results as they come, and how it ended. */
export interface Followed {
  results: UpdateResult[];
  /** Resolves once a result satisfies `test` (or rejects when the stream ends first). */
  until(test: (m: UpdateResult) => boolean): Promise<UpdateResult>;
  ended: Promise<{ error?: unknown; complete?: true }>;
  stop(): void;
}

/** Follows a subscription on any client with a sink-style `subscribe` (graphql-sse's, graphql-ws's). */
export function follow(subscribe: (sink: { next(v: any): void; error(e: unknown): void; complete(): void }) => () => void): Followed {
  const results: UpdateResult[] = [];
  const watchers: Array<() => void> = [];
  let settle!: (how: { error?: unknown; complete?: true }) => void;
  const ended = new Promise<{ error?: unknown; complete?: true }>((resolve) => (settle = resolve));
  let done = false;
  const stop = subscribe({
    next: (v) => {
      results.push(v);
      for (const w of watchers.splice(0)) w();
    },
    error: (error) => {
      done = true;
      settle({ error });
      for (const w of watchers.splice(0)) w();
    },
    complete: () => {
      done = true;
      settle({ complete: true });
      for (const w of watchers.splice(0)) w();
    },
  });
  const until = (test: (m: UpdateResult) => boolean) =>
    new Promise<UpdateResult>((resolve, reject) => {
      const check = () => {
        const hit = results.find(test);
        if (hit) return resolve(hit);
        if (done) reject(new Error(`the subscription ended first, after ${JSON.stringify(results).slice(0, 1000)}`));
        else watchers.push(check);
      };
      check();
    });
  return { results, until: (t) => within('the awaited result', until(t)), ended, stop };
}
