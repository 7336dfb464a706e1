import { authenticationFailed } from '../domain/accounts/apiKeyService';
import { keyAllows, type Requirement } from '../domain/accounts/permissions';
import { ApiError } from '../errors';
import type { Caller, KeyCaller } from './caller';
import { getOperation, type OperationId } from './contract';
import { GRAPHQL_OPERATIONS, isGraphQLOperation, type GraphQLOperationId } from './graphqlOperations';

/**
 * The one place permission is checked. The caller needs what the operation needs: its `x-permission` in
 * openapi.yaml (generated/operations.ts). A public operation needs nothing; any other needs a key that
 * allows it (403 `permission_denied`), so a restricted key gets the same answers over REST and GraphQL.
 * GraphQL's nested fields that read another resource authorize the REST operation they mirror; an
 * operation only GraphQL has needs what each REST operation it borrows from needs (graphqlOperations.ts).
 */
export function authorize(caller: Caller, operationId: OperationId | GraphQLOperationId): void {
  if (isGraphQLOperation(operationId)) {
    for (const borrowed of GRAPHQL_OPERATIONS[operationId].permissionOf) authorize(caller, borrowed);
    return;
  }
  const op = getOperation(operationId);
  const need = op.permission as Requirement | null;
  if (need === null) return;
  if (caller.kind === 'public') throw authenticationFailed();
  if (caller.kind === 'clientToken') {
    throw new ApiError('permission_denied', 'A client token reads only its payment (GET /v1/public/payments/{id} and its events); this route needs an API key.');
  }
  if (!keyAllows(caller.key, need)) {
    throw new ApiError('permission_denied', `This API key is not allowed to call ${op.method.toUpperCase()} ${op.path}`);
  }
}

/** The key caller of an operation that needs one, after authorize (which refused every other caller). */
export function authorizedKey(caller: Caller, operationId: OperationId | GraphQLOperationId): KeyCaller {
  authorize(caller, operationId);
  if (caller.kind !== 'key') throw authenticationFailed();
  return caller;
}
