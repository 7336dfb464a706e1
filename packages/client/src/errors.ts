/**
 * The one error the client throws: every non-2xx answer, and a request that got no answer at all.
 * `code` is the gateway's stable error code (`resource_not_found`, `idempotency_conflict`, …) from the
 * `{"error":{"code","message","request_id"}}` envelope, so callers branch on it rather than on messages.
 */
export class PgwError extends Error {
  /** HTTP status; 0 when no response arrived (connection refused, reset, DNS). */
  readonly status: number;
  /** Stable code from the envelope; `http_<status>` for an answer without one; `connection_error` for no answer. */
  readonly code: string;
  /** The envelope's `request_id`, else the `Request-Id` header; null without a response. */
  readonly requestId: string | null;
  /** Seconds from `Retry-After` (429, 503), when the gateway sent it. */
  readonly retryAfter: number | null;
  /** The raw response, for headers the error does not carry; null without one. */
  readonly response: Response | null;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    requestId?: string | null;
    retryAfter?: number | null;
    response?: Response | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'PgwError';
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.retryAfter = init.retryAfter ?? null;
    this.response = init.response ?? null;
  }

  /** Builds the error from an error response and its already-read body (parsed JSON or text). */
  static fromResponse(response: Response, body: unknown): PgwError {
    const envelope = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown } } | null)?.error;
    const code = typeof envelope?.code === 'string' ? envelope.code : `http_${response.status}`;
    const message =
      typeof envelope?.message === 'string'
        ? envelope.message
        : `${response.status} ${response.statusText || 'error'}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`;
    const requestId = typeof envelope?.request_id === 'string' ? envelope.request_id : response.headers.get('request-id');
    return new PgwError({ status: response.status, code, message, requestId, retryAfter: parseRetryAfter(response), response });
  }
}

/** `Retry-After` in seconds (the gateway sends integer seconds; an HTTP date is honoured too), or null. */
export function parseRetryAfter(response: Response): number | null {
  const raw = response.headers.get('retry-after');
  if (raw === null || raw.trim() === '') return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
