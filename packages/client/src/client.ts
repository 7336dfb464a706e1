import createFetchClient, { type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { operations, type ClientOperationSpec } from './generated/operations.js';
import { PgwError } from './errors.js';
import { retryingFetch, type RetryOptions } from './retry.js';
import type { ClientPaths } from './types.js';

export interface PgwClientOptions {
  /** The gateway's root URL (PUBLIC_BASE_URL), without /v1. Default http://localhost:3000. */
  baseUrl?: string;
  /** `sk_test_…`, a restricted key or `pk_test_…`; omit for public routes (e.g. creating a sandbox account). */
  apiKey?: string;
  /** Retries of 429 and 503 answers (see RetryOptions); `{ maxRetries: 0 }` turns them off. */
  retry?: RetryOptions;
  /** A fetch to send requests with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

// The same extra-argument rule openapi-fetch applies (its own helper is not exported).
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** The success half of openapi-fetch's result: errors are thrown as PgwError instead of returned. */
type Success<R> = R extends { data: infer D; error?: never; response: Response } ? { data: D; response: Response } : never;

// Paths is a parameter (always ClientPaths) only so that its constraint types Paths[P][M] as openapi-fetch needs.
export type PgwMethod<M extends HttpMethod, Paths extends Record<string, Record<string, any>> = ClientPaths> = <
  P extends PathsWithMethod<Paths, M>,
  Init extends MaybeOptionalInit<Paths[P], M>,
>(
  url: P,
  ...init: InitParam<Init>
) => Promise<Success<FetchResponse<Paths[P][M], Init, MediaType>>>;

/** GET routes that page with `starting_after` (the id of the last item of the previous page). */
export type PaginatedPath = {
  [P in PathsWithMethod<ClientPaths, 'get'>]: ClientPaths[P]['get'] extends { parameters: { query?: { starting_after?: string } } }
    ? ClientPaths[P]['get'] extends { responses: { 200: { content: { 'application/json': { data: unknown[] } } } } }
      ? P
      : never
    : never;
}[PathsWithMethod<ClientPaths, 'get'>];

/** One item of the list a paginated route answers. */
export type ListItem<P extends PaginatedPath> = ClientPaths[P]['get'] extends {
  responses: { 200: { content: { 'application/json': { data: (infer T)[] } } } };
}
  ? T
  : never;

/** The query of a paginated route, without the cursor (the iterator sets it). */
export type PaginateQuery<P extends PaginatedPath> = ClientPaths[P]['get'] extends { parameters: { query?: infer Q } }
  ? Omit<NonNullable<Q>, 'starting_after'>
  : never;

export interface PgwClient {
  GET: PgwMethod<'get'>;
  POST: PgwMethod<'post'>;
  /** The gateway's PUT routes replace a setting (`/webhook_endpoints/{id}/chaos`). */
  PUT: PgwMethod<'put'>;
  DELETE: PgwMethod<'delete'>;
  /**
   * Every item of a list, page after page, for `for await`: `for await (const p of
   * client.paginate('/payment_intents', { query: { status: 'SUCCEEDED' } })) …`. Each page is one GET
   * (with `limit` when given) continued with `starting_after` = the last item's id, until an answer says
   * `has_more: false`, is shorter than `limit`, or is empty. Errors are thrown as PgwError.
   */
  paginate<P extends PaginatedPath>(path: P, init?: { query?: PaginateQuery<P> }): AsyncIterable<ListItem<P>>;
  /** The root URL the client talks to. */
  readonly baseUrl: string;
}

const byRoute = new Map<string, ClientOperationSpec>(
  Object.values(operations).map((op) => [`${op.method} ${op.path}`, op]),
);

/**
 * A typed client for every REST operation of openapi.yaml: `client.GET('/payment_intents/{id}',
 * { params: { path: { id } } })` resolves to `{ data, response }` with `data` typed by the contract, or
 * throws PgwError. Root routes (health, documents, pages) are sent outside /v1, as the contract serves them.
 */
export function createClient(options: PgwClientOptions = {}): PgwClient {
  const baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  // A request that got no answer names the URL it was sent to (with the underlying reason: refused,
  // DNS, reset), so that `connection_error` says which server could not be reached.
  const send = async (request: Request): Promise<Response> => {
    try {
      return await fetchImpl(request);
    } catch (err) {
      throw new PgwError({
        status: 0,
        code: 'connection_error',
        message: `${request.method} ${request.url}: no response (${noResponseReason(err)})`,
        cause: err,
      });
    }
  };
  const inner = createFetchClient<ClientPaths>({
    baseUrl: `${baseUrl}/v1`,
    fetch: retryingFetch(send, options.retry),
    headers: { ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers },
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE') =>
    async (url: string, init: Record<string, any> = {}) => {
      const op = byRoute.get(`${method} ${url}`);
      const extra: Record<string, unknown> = {};
      if (op?.root) extra.baseUrl = baseUrl;
      if (op?.idempotencyKey && !hasIdempotencyKey(init)) {
        // Made once per call, before the retry loop, so every attempt carries the same key.
        extra.headers = { ...init.headers, 'Idempotency-Key': newIdempotencyKey() };
      }
      let result: { data?: unknown; error?: unknown; response: Response };
      try {
        result = await (inner[method] as (u: string, i: object) => Promise<typeof result>)(url, { ...init, ...extra });
      } catch (err) {
        if (err instanceof PgwError) throw err;
        throw new PgwError({
          status: 0,
          code: 'connection_error',
          message: `${method} ${op?.root ? baseUrl : `${baseUrl}/v1`}${url}: no response (${noResponseReason(err)})`,
          cause: err,
        });
      }
      if (result.error !== undefined || !result.response.ok) throw PgwError.fromResponse(result.response, result.error);
      return { data: result.data, response: result.response };
    };

  const GET = call('GET') as PgwMethod<'get'>;
  async function* paginate(path: string, init: { query?: Record<string, unknown> } = {}): AsyncGenerator<unknown> {
    const limit = typeof init.query?.limit === 'number' ? init.query.limit : null;
    let after: string | undefined;
    for (;;) {
      const query = { ...init.query, ...(after === undefined ? {} : { starting_after: after }) };
      const { data } = (await (GET as (p: string, i: object) => Promise<{ data: { data: { id: string }[]; has_more?: boolean } }>)(path, {
        params: { query },
      })) as { data: { data: { id: string }[]; has_more?: boolean } };
      yield* data.data;
      const last = data.data.at(-1);
      if (!last || data.has_more === false || (limit !== null && data.data.length < limit)) return;
      after = last.id;
    }
  }

  return {
    GET,
    POST: call('POST') as PgwMethod<'post'>,
    PUT: call('PUT') as PgwMethod<'put'>,
    DELETE: call('DELETE') as PgwMethod<'delete'>,
    paginate: paginate as PgwClient['paginate'],
    baseUrl,
  };
}

/** Why a request got no answer: the system's reason (`connect ECONNREFUSED 127.0.0.1:3000`) over fetch's `fetch failed`. */
function noResponseReason(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof Error && cause.message) return cause.message;
  if (err instanceof Error && err.name === 'TimeoutError') return 'timed out';
  return err instanceof Error ? err.message : String(err);
}

function hasIdempotencyKey(init: Record<string, any>): boolean {
  const fromParams = init.params?.header?.['Idempotency-Key'];
  if (typeof fromParams === 'string' && fromParams !== '') return true;
  const headers = init.headers;
  if (!headers) return false;
  if (headers instanceof Headers) return headers.has('idempotency-key');
  return Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key' && headers[name] != null);
}

/** 8–128 characters as the contract requires; random, so two calls never share one by accident. */
export function newIdempotencyKey(): string {
  return `pgw_${globalThis.crypto.randomUUID()}`;
}
