import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { Client, fetchExchange, mapExchange, subscriptionExchange, useQuery, type AnyVariables, type CombinedError, type UseQueryArgs } from 'urql';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { failureOf, failureWords, isRateLimited, rateLimitWords } from './errorWords';

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
  const client: Client = new Client({
    url: '/graphql',
    // The server takes operations by POST only (GET /graphql serves GraphiQL).
    preferGetMethod: false,
    fetchOptions: { credentials: 'same-origin', headers: { Accept: 'application/json' } },
    requestPolicy: 'network-only',
    exchanges: [
      retryWhenRateLimited(() => client),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => {
            hooks.onSubscriptions(++subscriptions);
            let open = true;
            // urql may end one subscription more than once; count it once. A subscription the server
            // refused (its rate limit, a permission) ends with its error: nothing live any more.
            const ended = () => {
              if (open) hooks.onSubscriptions(--subscriptions);
              open = false;
            };
            const unsubscribe = ws.subscribe(
              { ...request, query: request.query ?? '' },
              {
                next: (value) => sink.next(value as Parameters<typeof sink.next>[0]),
                error: (error) => {
                  ended();
                  sink.error(error);
                },
                complete: () => {
                  ended();
                  sink.complete();
                },
              },
            );
            return {
              unsubscribe: () => {
                unsubscribe();
                ended();
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

/**
 * When the gateway refuses a load for the session's rate limit (429), the load is tried again once its
 * Retry-After has passed, if a view still shows it; meanwhile ErrorAlert counts down. A mutation is not:
 * the person decides whether to send it again.
 */
const retryAt = new WeakMap<CombinedError, number>();

function retryWhenRateLimited(client: () => Client) {
  return mapExchange({
    onResult(result) {
      if (result.operation.kind !== 'query' || !result.error) return;
      const failure = failureOf(result.error);
      if (!isRateLimited(failure)) return;
      const seconds = failure.retryAfter ?? 5;
      retryAt.set(result.error, Date.now() + seconds * 1000);
      // reexecuteOperation does nothing once no view holds the query any more.
      setTimeout(() => client().reexecuteOperation({ ...result.operation, context: { ...result.operation.context, requestPolicy: 'network-only' } }), seconds * 1000);
    },
  });
}

/** An error in words for a person (errorWords.ts): never its code; argument names given as their labels. */
export function describeError(error: CombinedError | string, labels?: Readonly<Record<string, string>>): string {
  return failureWords(failureOf(error), labels);
}

/** A failed mutation becomes a thrown error in words: a confirm dialog stays open and shows it. */
export function throwIfError(res: { error?: CombinedError }, labels?: Readonly<Record<string, string>>): void {
  if (res.error) throw new Error(describeError(res.error, labels));
}

/** Seconds left until `at`, ticking each second while shown. */
function useSecondsUntil(at: number | undefined): number | undefined {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (at === undefined) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [at]);
  return at === undefined ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A refused or failed load or change, in words (describeError). `labels`: the view's own labels for
 * argument names its form shows otherwise than FIELD_LABELS does.
 */
export function ErrorAlert({ error, children, labels }: { error?: CombinedError | string | null; children?: ReactNode; labels?: Readonly<Record<string, string>> }) {
  const at = error && typeof error !== 'string' ? retryAt.get(error) : undefined;
  const seconds = useSecondsUntil(at);
  if (!error && !children) return null;
  const text = at !== undefined ? rateLimitWords(seconds, true) : error ? describeError(error, labels) : null;
  return (
    <p role="alert" className="error">
      {text}
      {children}
    </p>
  );
}

/** An idempotency key for mutations that take one (crypto.getRandomValues also works on plain-http hosts, unlike randomUUID). */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `dash-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
