import { ApiError } from '../errors';
import type { OperationId } from '../operations/contract';
import { validateRequestPart } from '../operations/validation';

/**
 * Mutation inputs become the JSON body of the REST operation they mirror (snake_case, REST enum
 * spellings), then go through that operation's generated validator: the rules live once, in
 * openapi.yaml, and a bad input gets the REST code and message (`amount_out_of_range`,
 * `invalid_phone_number`, `method_disabled` ... and `invalid_request` naming the field).
 *
 * GraphQL's explicit `null` on an optional input field means "not given", like a field left out.
 */
export function restBody(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}

export function validateBody<T>(operationId: OperationId, body: Record<string, unknown>): T {
  return validateRequestPart<T>(operationId, 'body', body);
}

/** The `idempotencyKey` argument, checked by the REST operation's own `Idempotency-Key` header rule. */
export function validateIdempotencyKey(operationId: OperationId, key: string): string {
  let headers: Record<string, unknown>;
  try {
    headers = validateRequestPart<Record<string, unknown>>(operationId, 'headers', { 'idempotency-key': key });
  } catch (err) {
    // Same rule and code; the message names the argument rather than the REST header.
    if (err instanceof ApiError) throw new ApiError(err.code, err.message.replace("header 'Idempotency-Key'", "argument 'idempotencyKey'"));
    throw err;
  }
  const value = headers['idempotency-key'];
  if (typeof value !== 'string') throw ApiError.invalid("Missing required argument 'idempotencyKey'");
  return value;
}
