import { ApiError, ERROR_STATUS, type ErrorCode } from '../errors';
import { execute, executeGraphQLOperation, type ExecuteOptions, type GraphQLResultBody, type RawInput, type ResultBody } from '../operations/execute';
import type { GraphQLOperationId, GraphQLOperationInputs } from '../operations/graphqlOperations';
import { gatewaySettings } from '../operations/settings';
import type { ExecutableOperationId } from '../operations/types';
import type { GraphQLContext } from './context';

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

/**
 * Runs the REST operation a field mirrors (operations/execute: permission, validation, idempotency,
 * handler) for the context's caller and answers its body. Ids come from arguments, never path segments:
 * they are looked up as given. `idempotencyKey` goes where REST's Idempotency-Key header goes, so a key
 * used over REST replays over GraphQL (and back) with the same object, a different input is
 * `idempotency_conflict`, and a stored 4xx is replayed as the same error. The context is the request as
 * admitted (the account's clock the count read); `prefetched`, the operation's read the resolver started
 * (its loader's), for the handler.
 */
export async function run<K extends ExecutableOperationId>(
  ctx: GraphQLContext,
  operationId: K,
  input: RawInput = {},
  options: Pick<ExecuteOptions<K>, 'prefetched'> = {},
): Promise<ResultBody<K>> {
  let result;
  try {
    result = await execute(operationId, ctx, input, { ...options, requestId: ctx.requestId, settings: gatewaySettings(ctx.config), runtime: ctx.runtime, validateParams: false });
  } catch (err) {
    // Same rule and code as REST's header; the message names the argument rather than the header.
    if (err instanceof ApiError && err.message.includes("header 'Idempotency-Key'")) {
      throw new ApiError(err.code, err.message.replace("header 'Idempotency-Key'", "argument 'idempotencyKey'"));
    }
    throw err;
  }
  if (result.status >= 400) {
    const stored = (result.body as { error?: { code?: string; message?: string } } | null)?.error;
    const code = stored?.code && stored.code in ERROR_STATUS ? (stored.code as ErrorCode) : 'internal_error';
    throw new ApiError(code, stored?.message ?? 'The original request with this idempotencyKey failed');
  }
  return result.body;
}

/**
 * Runs an operation REST has no route for (operations/graphqlOperations.ts) for the context's caller, on
 * execute's path as `run` does: the same permission check, span and handler context. Its input is the
 * field's arguments as that operation types them.
 */
export function runGraphQLOperation<K extends GraphQLOperationId>(ctx: GraphQLContext, operationId: K, input: GraphQLOperationInputs[K]): Promise<GraphQLResultBody<K>> {
  return executeGraphQLOperation(operationId, ctx, input, { requestId: ctx.requestId, settings: gatewaySettings(ctx.config), runtime: ctx.runtime });
}

/** The input of an operation that takes an Idempotency-Key: the body, and the key as REST's header. */
export function idempotent(idempotencyKey: string, body: Record<string, unknown>): RawInput {
  return { headers: { 'idempotency-key': idempotencyKey }, body };
}
