/**
 * The one error type of the service. Domain code throws it; REST maps it once (rest/errorHandler.ts),
 * GraphQL maps it once (graphql/errors.ts). `code` is the stable code of the specification's error table.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_phone_number: 400,
  amount_out_of_range: 400,
  method_disabled: 400,
  authentication_failed: 401,
  permission_denied: 403,
  feature_disabled: 403,
  account_suspended: 403,
  email_not_verified: 403,
  resource_not_found: 404,
  idempotency_conflict: 409,
  payment_already_processed: 409,
  payment_link_inactive: 410,
  payload_too_large: 413,
  rate_limit_exceeded: 429,
  internal_error: 500,
  maintenance: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * `Error.message`'s maxLength in openapi.yaml. A message may quote what the client sent (an unknown
 * field's name, an id from the path), which is as long as the client made it; past this it is cut.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1024;

function boundedMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  // A cut through a surrogate pair would leave half a character: drop it.
  return `${message.slice(0, MAX_ERROR_MESSAGE_CHARS - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers the error requires (e.g. Retry-After on 429/503). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(boundedMessage(message));
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }

  static invalid(message: string): ApiError {
    return new ApiError('invalid_request', message);
  }

  static notFound(what: string, id?: string): ApiError {
    return new ApiError('resource_not_found', id ? `No such ${what}: '${id}'` : `No such ${what}`);
  }

  static alreadyProcessed(message: string): ApiError {
    return new ApiError('payment_already_processed', message);
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
