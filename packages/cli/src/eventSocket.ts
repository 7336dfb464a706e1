import type { Client, createClient } from 'graphql-ws';
import type WebSocket from 'ws';
import { PgwError, type components } from '@pgw/client';
import type { Connection } from './connection';
import { apiFailure } from './errors';
import { restEventType } from './eventTypes';

/** An Event as REST lists it and webhooks carry it. */
export type GatewayEvent = components['schemas']['Event'];

export interface EventPage {
  events: GatewayEvent[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** How a connection ended: retry (after a drop, a lifetime close, a rate limit) or give up (bad key). */
export type SocketEnd = { fatal: PgwError } | { retry: string; immediately?: boolean };

const EVENT_FIELDS = 'id type sequence livemode createdAt data';
const SUBSCRIPTION = `subscription PgwEvents($types: [EventType!]) { events(types: $types) { ${EVENT_FIELDS} } }`;
// `after` is an event id: the gateway's stable order (newest first) continues past it (schema.graphql).
const PAGE_QUERY = `query PgwEventPage($first: Int!, $after: String) {
  events(first: $first, after: $after) { nodes { ${EVENT_FIELDS} } pageInfo { hasNextPage endCursor } }
}`;
export const PAGE_SIZE = 100;

/** Close codes after which retrying with the same key cannot help (graphql-ws CloseCode and ws.ts). */
const FATAL_CLOSES = new Set([4400, 4401, 4403, 4406]);

/** What a `next` message carries (graphql-ws's formatted result, with the extensions ws.ts adds). */
interface Answer<T> {
  data?: T | null;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}
type PageData = { events: { nodes: EventNode[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };

interface EventNode {
  id: string;
  type: string;
  sequence: number;
  livemode: boolean;
  createdAt: string;
  data: Record<string, unknown>;
}

function toEvent(node: EventNode): GatewayEvent {
  // REST's field order, so the forwarded body reads like a real delivery's.
  const event = {
    id: node.id,
    object: 'event',
    type: restEventType(node.type),
    sequence: node.sequence,
    livemode: node.livemode,
    created_at: node.createdAt,
    data: node.data,
  };
  return event as GatewayEvent;
}

export function graphqlWsUrl(baseUrl: string): string {
  const url = new URL('/graphql', `${baseUrl}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/**
 * One graphql-ws connection to /graphql, authenticated by `connection_init` `{authorization}` as
 * src/graphql/ws.ts expects. It does not reconnect by itself: `ended` settles once, on the first close
 * or fatal error, and the caller decides what follows (a new EventSocket and a catch-up), so that every
 * new connection is seen and caught up after.
 */
/**
 * graphql-ws and ws, loaded by the commands that open a socket (listen, events tail, resend) when they
 * first do: every other run of pgw starts without them (`pgw --help`: 0.37 s of wall time with them).
 */
interface SocketModules {
  createClient: typeof createClient;
  WebSocket: typeof WebSocket;
}
let socketModules: Promise<SocketModules> | undefined;
function loadSocketModules(): Promise<SocketModules> {
  socketModules ??= Promise.all([import('graphql-ws'), import('ws')]).then(([gws, ws]) => ({ createClient: gws.createClient, WebSocket: ws.default }));
  return socketModules;
}

export class EventSocket {
  readonly ended: Promise<SocketEnd>;
  private readonly client: Client;
  private end!: (reason: SocketEnd) => void;
  private over = false;

  /** Opens a connection (see the class). */
  static async open(conn: Connection): Promise<EventSocket> {
    return new EventSocket(conn, await loadSocketModules());
  }

  private constructor(conn: Connection, { createClient, WebSocket }: SocketModules) {
    this.ended = new Promise((resolve) => {
      this.end = (reason) => {
        if (this.over) return;
        this.over = true;
        resolve(reason);
        void this.client.dispose();
      };
    });
    this.client = createClient({
      url: graphqlWsUrl(conn.baseUrl),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${conn.apiKey}` },
      lazy: false,
      retryAttempts: 0,
      // Pings keep proxies from dropping an idle socket; a dead one shows up as a close.
      keepAlive: 10_000,
      onNonLazyError: () => undefined,
      on: {
        closed: (event) => this.end(endOfClose(event)),
        error: () => undefined,
      },
    });
  }

  /** Live events of the account (of `types` when given, GraphQL enum names), each handed to `onEvent`. */
  subscribe(types: string[] | null, onEvent: (event: GatewayEvent) => void): void {
    this.client.subscribe<{ events: EventNode }>(
      { query: SUBSCRIPTION, variables: { types } },
      {
        next: (result) => {
          const failure = resultFailure(result);
          if (failure) this.end(endOfErrors(failure));
          else if (result.data) onEvent(toEvent(result.data.events));
        },
        error: (err) => this.end(Array.isArray(err) ? endOfErrors(apiFailureOf(err)) : endOfClose(err)),
        complete: () => this.end({ retry: 'subscription completed by the server', immediately: true }),
      },
    );
  }

  /** One page of the account's events, newest first, older than `after` (an event id) when given. */
  page(after: string | null, first = PAGE_SIZE): Promise<EventPage> {
    return new Promise((resolve, reject) => {
      let answer: Answer<PageData> | null = null;
      void this.ended.then(() => reject(new Error('connection closed')));
      this.client.subscribe<PageData>(
        { query: PAGE_QUERY, variables: { first, after } },
        {
          next: (result) => (answer = result),
          error: (err) => reject(Array.isArray(err) ? apiFailureOf(err) : new Error('connection closed')),
          complete: () => {
            const failure = answer ? resultFailure(answer) : null;
            if (failure) return reject(failure);
            const events = answer?.data?.events;
            if (!events) return reject(new Error('empty answer to the events query'));
            resolve({ events: events.nodes.map(toEvent), hasNextPage: events.pageInfo.hasNextPage, endCursor: events.pageInfo.endCursor });
          },
        },
      );
    });
  }

  /** Closes the connection (a one-off lookup is done). */
  close(): void {
    this.end({ retry: 'closed by pgw', immediately: true });
  }

  /** Ends the connection because of what a task on it met: a gateway refusal, or anything else (retried). */
  fail(err: unknown): void {
    if (err instanceof PgwError) this.end(endOfErrors(err));
    else this.end({ retry: err instanceof Error ? err.message : String(err) });
  }
}

function resultFailure(result: Answer<unknown>): PgwError | null {
  return result.errors?.length ? apiFailureOf(result.errors) : null;
}

function apiFailureOf(errors: readonly { message: string; extensions?: Record<string, unknown> }[]): PgwError {
  const first = errors[0];
  const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : 'graphql_error';
  const requestId = typeof first?.extensions?.request_id === 'string' ? first.extensions.request_id : null;
  return apiFailure(code, first?.message ?? 'GraphQL error', requestId);
}

/** A refusal of the subscription: rate limits and maintenance pass, anything else (permissions) stops. */
function endOfErrors(err: PgwError): SocketEnd {
  return err.code === 'rate_limit_exceeded' || err.code === 'maintenance' || err.code === 'internal_error' ? { retry: `${err.code}: ${err.message}` } : { fatal: err };
}

function endOfClose(event: unknown): SocketEnd {
  const { code, reason } = (event ?? {}) as { code?: number; reason?: unknown };
  const text = typeof reason === 'string' ? reason : Buffer.isBuffer(reason) ? reason.toString('utf8') : '';
  if (code !== undefined && FATAL_CLOSES.has(code)) {
    // ws.ts closes with `<code>: <message>` (authentication_failed, rate_limit_exceeded) or `api key revoked`.
    const match = /^([a-z_]+): (.*)$/.exec(text);
    return { fatal: apiFailure(match?.[1] ?? 'authentication_failed', match?.[2] ?? (text || `socket closed with ${code}`)) };
  }
  // 1000 is the gateway's lifetime close: reconnect at once, as graphql-ws clients do.
  return { retry: `connection closed (${code ?? 'no code'}${text ? `: ${text}` : ''})`, immediately: code === 1000 };
}
