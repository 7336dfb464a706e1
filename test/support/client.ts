import { readFileSync } from 'node:fs';
import path from 'node:path';
import { operations } from '../../generated/operations';
import { findOperation, getValidator, type Operation } from '../../src/operations/contract';
import { ROOT } from './processes';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is (for broken JSON and odd content types). */
  rawBody?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  /** Override the client's key; null sends no Authorization header. */
  key?: string | null;
  /** A root route (health, readiness, documents, pages): `path` as given, not under /v1. */
  root?: boolean;
  /** Aborts the request (a test that must not wait for ever on an answer that never comes). */
  signal?: AbortSignal;
}

/**
 * A small HTTP client for tests. Every JSON response it receives is checked against the validator
 * generated from openapi.yaml for that operation and status: a response the contract does not
 * describe fails the test, so behaviour and contract cannot part.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string | null = null,
  ) {}

  withKey(key: string | null): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  get<T = any>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...opts, body });
  }
  put<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts: RequestOptions = {}) {
    return this.request<T>('DELETE', path, opts);
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const key = opts.key === undefined ? this.key : opts.key;
    if (key) headers.authorization = `Bearer ${key}`;
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    let body: string | undefined;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = this.baseUrl + (opts.root || path.startsWith('/v1') || !path.startsWith('/') ? path : `/v1${path}`);
    const res = await fetch(url, { method, headers, body, signal: opts.signal });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    const parsed = contentType.includes('application/json') && text ? JSON.parse(text) : text;
    assertMatchesContract(method, new URL(url).pathname, res.status, contentType, parsed, res.headers);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }
}

/**
 * Throws unless the answer is one openapi.yaml declares for the operation serving `METHOD pathname`:
 * its status, content type, JSON body, the headers it marks required, and no undeclared
 * `Idempotency-Replayed` or `Retry-After`. Root routes (health, readiness, documents, pages) are held to
 * their operations the same way; other root paths (GraphQL, dashboard, assets) are not in the contract.
 */
export function assertMatchesContract(method: string, pathname: string, status: number, contentType: string, body: unknown, headers?: Headers): void {
  if (!pathname.startsWith('/v1/')) {
    const root = findRootOperation(method, pathname);
    if (root) assertMatchesOperation(root, method, pathname, status, contentType, body, headers);
    return;
  }
  const found = findOperation(method, pathname.slice(3));
  if (!found) {
    // Unknown routes must still answer with the error envelope: 404, or 429 once the caller (its key,
    // or its IP without one) is over its rate limit.
    if ((status !== 404 && status !== 429) || !isErrorEnvelope(body)) {
      throw new Error(`${method} ${pathname}: no such operation in openapi.yaml, and the answer is not a 404 error envelope (${status})`);
    }
    return;
  }
  assertMatchesOperation(found, method, pathname, status, contentType, body, headers);
}

/** Headers with a meaning of their own: a response may carry them only where openapi.yaml declares them. */
const DECLARED_ONLY_HEADERS = ['Idempotency-Replayed', 'Retry-After'];

function assertMatchesOperation(
  found: Operation,
  method: string,
  pathname: string,
  status: number,
  contentType: string,
  body: unknown,
  headers?: Headers,
): void {
  if (headers) {
    const missing = requiredResponseHeaders(found.operationId, status).filter((name) => !headers.has(name));
    if (missing.length > 0) {
      throw new Error(`${method} ${pathname} (${found.operationId}) ${status} lacks ${missing.join(', ')}, which openapi.yaml declares required`);
    }
    const declared = declaredResponseHeaders(found.operationId, status).map((name) => name.toLowerCase());
    const undeclared = DECLARED_ONLY_HEADERS.filter((name) => headers.has(name) && !declared.includes(name.toLowerCase()));
    if (undeclared.length > 0) {
      throw new Error(`${method} ${pathname} (${found.operationId}) ${status} carries ${undeclared.join(', ')}, which openapi.yaml does not declare there`);
    }
  }
  const declaredTypes = (found.responseContentTypes as Record<string, readonly string[]>)[String(status)];
  if (!declaredTypes) {
    throw new Error(`${method} ${pathname} (${found.operationId}) answered ${status}, which openapi.yaml does not declare`);
  }
  const mediaType = contentType.split(';')[0]!.trim();
  if (declaredTypes.length > 0 && !declaredTypes.includes(mediaType)) {
    throw new Error(`${method} ${pathname} (${found.operationId}) ${status} sent ${mediaType}; openapi.yaml declares ${declaredTypes.join(', ')}`);
  }
  const name = (found.validators.responses as Record<string, string>)[String(status)];
  if (!name || mediaType !== 'application/json') return;
  const validate = getValidator('responses', name);
  if (!validate(body)) {
    throw new Error(
      `${method} ${pathname} (${found.operationId}) ${status} does not match openapi.yaml: ${JSON.stringify(validate.errors)}\nbody: ${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}

function isErrorEnvelope(body: unknown): boolean {
  const err = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown } })?.error;
  return typeof err?.code === 'string' && typeof err.message === 'string' && typeof err.request_id === 'string';
}

let responseHeaders: Map<string, Array<{ name: string; required: boolean }>> | undefined;

/** The headers openapi.yaml declares on this operation's response with this status. */
function responseHeadersOf(operationId: string, status: number): Array<{ name: string; required: boolean }> {
  if (!responseHeaders) {
    const doc = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8'));
    const deref = (o: any): any => (o && typeof o.$ref === 'string' ? deref(o.$ref.slice(2).split('/').reduce((x: any, k: string) => x?.[k], doc)) : o);
    responseHeaders = new Map();
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        if (!op?.operationId) continue;
        for (const [code, response] of Object.entries<any>(op.responses ?? {})) {
          const declared = Object.entries<any>(deref(response).headers ?? {});
          responseHeaders.set(`${op.operationId} ${code}`, declared.map(([name, h]) => ({ name, required: deref(h).required === true })));
        }
      }
    }
  }
  return responseHeaders.get(`${operationId} ${status}`) ?? [];
}

/** The headers openapi.yaml marks `required` on this operation's response with this status. */
export function requiredResponseHeaders(operationId: string, status: number): string[] {
  return responseHeadersOf(operationId, status).filter((h) => h.required).map((h) => h.name);
}

/** Every header openapi.yaml declares on this operation's response with this status. */
export function declaredResponseHeaders(operationId: string, status: number): string[] {
  return responseHeadersOf(operationId, status).map((h) => h.name);
}

const rootMatchers = Object.values(operations)
  .filter((op) => op.basePath === '')
  .map((op) => ({
    op: op as Operation,
    regex: new RegExp('^' + op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '/?$'),
  }));

/** The root operation (served outside /v1: health, readiness, documents, pages) serving `METHOD pathname`, if any. */
export function findRootOperation(method: string, pathname: string): Operation | undefined {
  const m = method.toUpperCase();
  return rootMatchers.find((x) => x.op.method === m && x.regex.test(pathname))?.op;
}
