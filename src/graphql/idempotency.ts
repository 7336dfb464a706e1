import { runIdempotent, type IdempotentAttempt } from '../domain/idempotency/idempotency.service';
import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors';
import { getOperation, type OperationId } from '../operations/contract';
import type { GraphQLContext } from './context';
import { validateBody, validateIdempotencyKey } from './input';

/**
 * createPaymentIntent / createRefund run inside the same idempotency service as REST, in the scope of
 * the REST operation (account + method + path + key) and fingerprinting the same snake_case body a REST
 * client would send. So a key used over REST replays over GraphQL (and back) with the same object, a
 * different input is `idempotency_conflict`, and a stored 4xx is replayed as the same error.
 */
export async function runIdempotentMutation<T>(
  ctx: GraphQLContext,
  operationId: OperationId,
  idempotencyKey: string,
  body: Record<string, unknown>,
  run: (validBody: any, attempt: IdempotentAttempt) => Promise<T>,
): Promise<T> {
  const op = getOperation(operationId);
  const key = validateIdempotencyKey(operationId, idempotencyKey);
  const successStatus = Number(Object.keys(op.responseContentTypes).find((s) => s.startsWith('2')) ?? 200);
  const out = await runIdempotent(
    { accountId: ctx.actor.accountId, method: op.method.toUpperCase(), path: op.path, key, body, requestId: ctx.requestId },
    async (attempt) => ({ status: successStatus, body: await run(validateBody(operationId, body), attempt) }),
  );
  if (out.status >= 400) {
    const stored = (out.body as { error?: { code?: string; message?: string } } | null)?.error;
    const code = stored?.code && stored.code in ERROR_STATUS ? (stored.code as ErrorCode) : 'internal_error';
    throw new ApiError(code, stored?.message ?? 'The original request with this idempotencyKey failed');
  }
  return out.body as T;
}
