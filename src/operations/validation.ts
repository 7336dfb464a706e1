import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors';
import { errorCodeFor, getOperation, getValidator, type OperationId, type ValidatorFn } from './contract';

export type RequestPart = 'body' | 'query' | 'params' | 'headers';

interface AjvErrorLike {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const PART_LABEL: Record<RequestPart, string> = {
  body: 'field',
  query: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** Canonical spellings of the headers the contract declares, for error messages. */
const HEADER_NAMES: Record<string, string> = {
  'idempotency-key': 'Idempotency-Key',
  'last-event-id': 'Last-Event-ID',
};

/**
 * Validates one part of a request with the validator generated from openapi.yaml. This is the only
 * request validation there is: the document is the contract, the code cannot drift from it.
 * Returns the (possibly coerced, defaulted) data; throws an ApiError naming the field.
 */
export function validateRequestPart<T = unknown>(operationId: OperationId, part: RequestPart, data: unknown): T {
  const op = getOperation(operationId);
  const name = (op.validators as Partial<Record<RequestPart, string>>)[part];
  if (!name) return data as T;
  const validate: ValidatorFn = getValidator(part === 'body' ? 'requests' : 'params', name);
  // The params validators coerce in place: keep what the client sent to check how numbers were spelled.
  const sent = part !== 'body' && data && typeof data === 'object' ? { ...(data as Record<string, unknown>) } : undefined;
  if (validate(data)) {
    if (sent) rejectCoercedNumbers(part, sent, data as Record<string, unknown>);
    return data as T;
  }
  const err = (validate.errors?.[0] ?? { instancePath: '', keyword: 'unknown', params: {} }) as AjvErrorLike;
  if (part === 'params') throw unknownPathId(err);
  throw toApiError(operationId, part, err);
}

/**
 * openapi.yaml gives every path parameter the pattern of the ids (or link codes) the gateway issues. A
 * value outside it names no object, and the specification answers an object that does not exist with
 * 404 `resource_not_found` (not 400), so a malformed id is answered exactly like an unknown one.
 */
function unknownPathId(err: AjvErrorLike): ApiError {
  const name = err.instancePath.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') || 'id';
  const pattern = typeof err.params.pattern === 'string' ? ` (it must match ${err.params.pattern})` : '';
  return new ApiError('resource_not_found', `No such object: path parameter '${name}' names none${pattern}`);
}

/**
 * AJV's type coercion (params, query, headers) goes through Number(): it accepts `1e2`, `0x10`, `+5`,
 * `5.0`, ` 5` and `Infinity` (which then skips the range checks: `?limit=Infinity` would list
 * everything). The contract decisions allow plain decimal digits only, never coerced: every value the
 * validator turned into a number must have been sent as digits. Values it filled in as defaults were
 * not sent and are not checked. (Every number the contract takes outside a body is an integer.)
 */
const PLAIN_DIGITS = /^[0-9]+$/;

function rejectCoercedNumbers(part: RequestPart, sent: Record<string, unknown>, coerced: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(coerced)) {
    if (typeof value !== 'number' || !(key in sent)) continue;
    const raw = sent[key];
    const plain = typeof raw === 'string' ? PLAIN_DIGITS.test(raw) : typeof raw === 'number' && Number.isSafeInteger(raw);
    if (!plain || !Number.isSafeInteger(value)) {
      throw ApiError.invalid(`Invalid ${PART_LABEL[part]} '${label(part, key)}': must be an integer written in plain decimal digits`);
    }
  }
}

function toApiError(operationId: OperationId, part: RequestPart, err: AjvErrorLike): ApiError {
  const segments = err.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = segments.join('.');
  let message: string;
  switch (err.keyword) {
    case 'additionalProperties': {
      field = join(field, String(err.params.additionalProperty));
      message = `Unknown ${PART_LABEL[part]} '${label(part, field)}'`;
      break;
    }
    case 'required': {
      field = join(field, String(err.params.missingProperty));
      message = `Missing required ${PART_LABEL[part]} '${label(part, field)}'`;
      break;
    }
    default: {
      message = field
        ? `Invalid ${PART_LABEL[part]} '${label(part, field)}': ${err.message ?? 'is invalid'}`
        : `Invalid request ${part}: ${err.message ?? 'is invalid'}`;
    }
  }
  // openapi.yaml marks some fields with `x-error-code` (a malformed mobile is invalid_phone_number, an
  // amount outside the limits amount_out_of_range); the generated errorCodeFor applies the rule.
  const special = part === 'body' ? errorCodeFor(operationId, err) : 'invalid_request';
  const code: ErrorCode = special in ERROR_STATUS ? (special as ErrorCode) : 'invalid_request';
  return new ApiError(code, message);
}

function join(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

function label(part: RequestPart, field: string): string {
  return part === 'headers' ? HEADER_NAMES[field.toLowerCase()] ?? field : field;
}
