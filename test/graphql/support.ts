import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { busStats } from '../../src/realtime/eventBus';
import { waitFor } from '../support/wait';

/**
 * The real gateway with the payments core's background work (rail timers, outbox sweeper) running:
 * the shared test/support/server.ts helper under the name the GraphQL suites use.
 */
export { startGatewayWithJobs as startGraphqlTestServer } from '../support/server';

export interface GraphQLResponse<T = any> {
  status: number;
  headers: Headers;
  body: { data?: T; errors?: Array<{ message: string; path?: unknown[]; extensions?: { code?: string; request_id?: string } }> };
}

/** POST /graphql with a bearer key (null: no Authorization header). */
export async function gql<T = any>(baseUrl: string, key: string | null, query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const text = await res.text();
  let body: GraphQLResponse['body'];
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`POST /graphql answered ${res.status} with non-JSON: ${text.slice(0, 500)}`);
  }
  return { status: res.status, headers: res.headers, body };
}

/** The data of a successful operation; fails with the errors otherwise. */
export async function gqlData<T = any>(baseUrl: string, key: string, query: string, variables?: Record<string, unknown>): Promise<T> {
  const res = await gql<T>(baseUrl, key, query, variables);
  if (res.body.errors?.length || !res.body.data) {
    throw new Error(`GraphQL errors (${res.status}): ${JSON.stringify(res.body.errors)}`);
  }
  return res.body.data;
}

/** The codes of a failed operation's errors. */
export function errorCodes(res: GraphQLResponse): string[] {
  return (res.body.errors ?? []).map((e) => e.extensions?.code ?? '?');
}

export function wsClient(baseUrl: string, key: string | null, opts: { onClose?: (code: number, reason: string) => void } = {}): Client {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: key === null ? {} : { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    lazy: true,
    on: {
      closed: (event) => {
        const e = event as { code: number; reason: string };
        opts.onClose?.(e.code, String(e.reason));
      },
    },
  });
}

/** Collects the messages of one subscription until `done(messages)` says so or the deadline passes. */
export function collect<T = any>(
  client: Client,
  query: string,
  variables: Record<string, unknown>,
  done: (messages: Array<{ data?: T; errors?: any[] }>) => boolean,
  timeoutMs = 30_000,
): Promise<Array<{ data?: T; errors?: any[] }>> {
  const messages: Array<{ data?: T; errors?: any[] }> = [];
  return new Promise((resolve, reject) => {
    let unsubscribe: () => void = () => undefined;
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`subscription timed out after ${timeoutMs} ms with ${JSON.stringify(messages).slice(0, 2000)}`));
    }, timeoutMs);
    const finish = (err?: unknown) => {
      clearTimeout(timer);
      unsubscribe();
      if (err) reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
      else resolve(messages);
    };
    unsubscribe = client.subscribe<T>(
      { query, variables },
      {
        next: (msg) => {
          messages.push(msg as { data?: T; errors?: any[] });
          if (done(messages)) finish();
        },
        error: (err) => {
          if (Array.isArray(err)) {
            messages.push({ errors: err });
            finish();
          } else finish(err);
        },
        complete: () => finish(),
      },
    );
  });
}

/** Polls `fn` until it returns something truthy and resolves with it (test/support/wait.ts waitFor). */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, stepMs = 100): Promise<T> {
  return (await waitFor(fn, (v) => Boolean(v), timeoutMs, stepMs)) as T;
}

/**
 * Resolves once exactly `count` subscriptions (GraphQL or SSE) are registered on this process's event
 * bus. After a subscribe, reaching the new count says it is live and sees every event stored from now
 * on (the protocol acknowledges no subscribe, and account events are not replayed); before one, 0
 * says the earlier tests' subscriptions, released asynchronously after their client went, are gone.
 */
export async function busSubscribersAre(count: number): Promise<void> {
  await waitFor(async () => busStats().subscribers, (n) => n === count, 30_000, 20);
}

export const INTENT_FIELDS = `
  id amount currency paymentMethod status failureCode customer { mobile } merchantReference
  reference { entity number expiresAt } amountRefunded fee feeVersion apiKeyId metadata livemode createdAt updatedAt
`;
