import { createContext, useContext, useEffect, useRef, type ReactNode } from 'react';
import { Client, fetchExchange, subscriptionExchange, useQuery, type AnyVariables, type CombinedError, type UseQueryArgs } from 'urql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

/**
 * The dashboard's GraphQL client: urql, with queries and mutations over fetch (POST /graphql, the
 * session cookie, a JSON body: the CSRF-safe form the server requires) and subscriptions over one
 * graphql-ws socket (same origin, the cookie sent by the browser with the upgrade, an empty
 * connection_init). No cache exchange: every view reads the server's current state when it opens, and
 * no answer is ever stale after a mutation.
 */
export interface Live {
  /** Counts reconnections: views refetch what they show when it changes, to catch up on what they missed. */
  generation: number;
  connected: boolean;
  /**
   * Subscriptions open now. The shell shows a live indicator only while the current view holds one:
   * a page without live data has nothing to be live about (counted at the exchange, so any view's
   * useSubscription counts without doing anything).
   */
  subscriptions: number;
}

export const LiveContext = createContext<Live>({ generation: 0, connected: false, subscriptions: 0 });

export interface DashboardClient {
  client: Client;
  ws: WsClient;
}

export interface SocketHooks {
  /** The socket is open (again); `wasRetry` after a drop. */
  onConnected(wasRetry: boolean): void;
  /** The socket closed; `code` is the WebSocket close code (1006: dropped, 44xx: refused by the server). */
  onClosed(code: number | undefined): void;
  /** How many subscriptions are open, after each one starts or ends. */
  onSubscriptions(count: number): void;
}

/** Reconnect after 0.5, 1, 2, 4 s, then every 5 s, for as long as the page is open (a little jitter spreads reconnecting tabs). */
const retryWait = (retries: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.min(500 * 2 ** retries, 5000) + Math.random() * 250));

export function createDashboardClient(hooks: SocketHooks): DashboardClient {
  let subscriptions = 0;
  const ws = createWsClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    // Connect on the first subscription; keep the socket a while after the last one ends so that moving
    // between views does not reconnect each time.
    lazy: true,
    lazyCloseTimeout: 15_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    // Also retry when the upgrade itself fails (server restarting): the library's fatal close codes
    // (4401 unauthorized, 4403, 4429 ...) still stop it.
    shouldRetry: () => true,
    retryWait,
    keepAlive: 20_000,
    on: {
      connected: (_socket, _payload, wasRetry) => hooks.onConnected(wasRetry),
      closed: (event) => hooks.onClosed((event as CloseEvent | undefined)?.code),
    },
  });
  const client = new Client({
    url: '/graphql',
    // The server takes operations by POST only (GET /graphql serves GraphiQL).
    preferGetMethod: false,
    fetchOptions: { credentials: 'same-origin', headers: { Accept: 'application/json' } },
    requestPolicy: 'network-only',
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => {
            hooks.onSubscriptions(++subscriptions);
            const unsubscribe = ws.subscribe({ ...request, query: request.query ?? '' }, sink);
            let open = true;
            return {
              unsubscribe: () => {
                unsubscribe();
                // urql may call it more than once for one subscription; count it once.
                if (open) hooks.onSubscriptions(--subscriptions);
                open = false;
              },
            };
          },
        }),
      }),
    ],
  });
  return { client, ws };
}

/**
 * useQuery that reads again (from the network) after the socket reconnects: what changed meanwhile shows
 * up. Given a TypedDocumentNode (generated/dashboard/documents.ts), Data and Variables come from it.
 */
export function useLiveQuery<Data, Variables extends AnyVariables = AnyVariables>(args: UseQueryArgs<Variables, Data>) {
  const [result, reexecute] = useQuery<Data, Variables>(args);
  const { generation } = useContext(LiveContext);
  const seen = useRef(generation);
  useEffect(() => {
    if (seen.current === generation) return;
    seen.current = generation;
    reexecute({ requestPolicy: 'network-only' });
  }, [generation, reexecute]);
  return [result, reexecute] as const;
}

/** The gateway's error code and message (extensions.code is the REST error code). */
export function describeError(error: CombinedError): string {
  const gql = error.graphQLErrors[0];
  if (gql) return `${String(gql.extensions?.code ?? 'error')}: ${gql.message}`;
  const response = error.response as Response | undefined;
  return error.networkError ? `network_error: ${error.networkError.message}${response ? ` (HTTP ${response.status})` : ''}` : error.message;
}

export function ErrorAlert({ error, children }: { error?: CombinedError | string | null; children?: ReactNode }) {
  if (!error && !children) return null;
  return (
    <p role="alert" className="error">
      {typeof error === 'string' ? error : error ? describeError(error) : null}
      {children}
    </p>
  );
}

/** An idempotency key for mutations that take one (crypto.getRandomValues also works on plain-http hosts, unlike randomUUID). */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `dash-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
