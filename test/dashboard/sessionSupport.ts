import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/**
 * Helpers of the dashboard session tests: sign-in over HTTP as a browser would (the cookie it gets
 * back), GraphQL with that cookie, and graphql-ws sockets whose upgrade carries the cookie and an Origin.
 */
export const COOKIE_FLAGS = /^pgw_session=([A-Za-z0-9_-]{43}); HttpOnly; SameSite=Strict; Path=\/$/;

export interface SignIn {
  status: number;
  body: any;
  text: string;
  setCookie: string | null;
  /** `pgw_session=<value>`, what a browser sends back. */
  cookie: string | null;
}

export async function signIn(baseUrl: string, key: string, headers: Record<string, string> = {}): Promise<SignIn> {
  const res = await fetch(`${baseUrl}/dashboard/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ key }),
  });
  const text = await res.text();
  const setCookie = res.headers.get('set-cookie');
  const value = setCookie ? /^pgw_session=([^;]*)/.exec(setCookie)?.[1] : undefined;
  return { status: res.status, body: JSON.parse(text), text, setCookie, cookie: value ? `pgw_session=${value}` : null };
}

/** A fetch answer read as JSON, with its text. */
export async function answer(res: Response): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text, headers: res.headers };
}

/** POST /graphql with the cookie (no Authorization), a JSON body unless `raw` gives another. */
export async function cookieGql(
  baseUrl: string,
  cookie: string,
  query: string,
  variables: Record<string, unknown> = {},
  opts: { headers?: Record<string, string>; raw?: { type: string; body: string } } = {},
) {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { cookie, 'content-type': opts.raw?.type ?? 'application/json', ...opts.headers },
    body: opts.raw?.body ?? JSON.stringify({ query, variables }),
  });
  return answer(res);
}

/** The data of a successful cookie operation; fails with its errors otherwise. */
export async function cookieData<T = any>(baseUrl: string, cookie: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await cookieGql(baseUrl, cookie, query, variables);
  if (res.body.errors?.length || !res.body.data) throw new Error(`GraphQL errors (${res.status}): ${res.text}`);
  return res.body.data as T;
}

const wsUrl = (baseUrl: string) => `${baseUrl.replace(/^http/, 'ws')}/graphql`;

/** A graphql-ws client whose upgrade sends the cookie and Origin, and whose connection_init has no key. */
export function cookieWsClient(baseUrl: string, cookie: string, origin: string, onClose?: (code: number, reason: string) => void): Client {
  const headers = { cookie, origin };
  class BrowserLikeSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({
    url: wsUrl(baseUrl),
    webSocketImpl: BrowserLikeSocket,
    retryAttempts: 0,
    lazy: true,
    on: { closed: (event) => onClose?.((event as { code: number }).code, String((event as { reason: string }).reason)) },
  });
}

/** The HTTP answer to an upgrade the server refuses (status and body), or 'open' when it accepts it. */
export function upgradeAnswer(baseUrl: string, headers: Record<string, string>): Promise<{ status: number; body: string } | 'open'> {
  const ws = new WebSocket(wsUrl(baseUrl), 'graphql-transport-ws', { headers });
  return new Promise((resolve) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('error', () => undefined);
  });
}
