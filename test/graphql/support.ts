import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startCoreJobs, stopCoreJobs } from '../../src/domain/payments/payments.jobs';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The real gateway with the payments core's background work (rail timers, outbox sweeper) running;
 * starting the jobs is idempotent, so this keeps working once src/server.ts starts them itself.
 */
export async function startGraphqlTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer(env);
  startCoreJobs({ timerPollMs: 100 });
  return {
    ...server,
    stop: async () => {
      await stopCoreJobs();
      await server.stop();
    },
  };
}

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

export async function until<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 20_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export const INTENT_FIELDS = `
  id amount currency paymentMethod status failureCode customer { mobile } merchantReference
  reference { entity number expiresAt } amountRefunded fee feeVersion apiKeyId metadata livemode createdAt updatedAt
`;
