import { inSpan, tracingOn } from '../tracing/tracing';
import { runIdempotent, type IdempotentAttempt } from '../domain/idempotency/idempotencyService';
import { authorizedKey, authorize } from './authorize';
import type { AdmittedRequest } from './admit';
import { startBeforeClaim, startedFor, type PrefetchedOf } from './prefetch';
import type { KeyCaller } from './caller';
import { getOperation, type OperationId } from './contract';
import type { GraphQLOperationId, GraphQLOperationInputs } from './graphqlOperations';
import { graphqlHandlers, handlers, type GraphQLHandlers, type Handlers } from './handlers';
import type { GatewaySettings } from './settings';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { ExecutableOperationId, KeyContext, OperationInput, PathParams, PublicContext, QueryParams } from './types';
import { validateRequestPart } from './validation';

/** A request's parts as the protocol received them, before validation. */
export interface RawInput {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  /** The JSON body (undefined when none was sent). */
  body?: unknown;
}

export interface ExecuteOptions<K extends ExecutableOperationId = ExecutableOperationId> {
  requestId: string;
  /** The gateway's settings, for the handler (the protocol has them from its construction). */
  settings: GatewaySettings;
  /** The gateway's own services (its hooks, timers, delivery engine), for the handler: passed, never looked up. */
  runtime: GatewayRuntime;
  /**
   * Reads the body once params, query and headers are valid (REST reads the request stream then, so a
   * bad path id is answered before a bad body). Takes the place of `input.body`.
   */
  readBody?: () => Promise<unknown>;
  /**
   * False where the protocol passes ids that were never path segments (GraphQL arguments): they are
   * looked up as given, and an id outside the contract's pattern gets the service's own not-found.
   */
  validateParams?: boolean;
  /**
   * A read of the operation's object the protocol started itself (GraphQL's loader), for the handler's
   * ctx.prefetched; else the one admission started for this operation and these parameters.
   */
  prefetched?: PrefetchedOf<K>;
}

export interface OperationResult<Body = unknown> {
  /** The contract's success status, or the stored status of an idempotent replay (a 4xx included). */
  status: number;
  body: Body;
  /** The contract's content type of a success that is not JSON (an SVG). */
  contentType?: string;
  /** On idempotent operations: `body` as the JSON text the key stored, the same bytes on every replay. */
  json?: string;
  replayed?: boolean;
}

export type ResultBody<K extends ExecutableOperationId> = Awaited<ReturnType<Handlers[K]>>;

/** The input parts that are valid, before the body (also what a stream operation's protocol runs on). */
export function validateInput<K extends OperationId>(
  operationId: K,
  input: RawInput,
  options: Pick<ExecuteOptions, 'validateParams'> = {},
): Omit<OperationInput<K>, 'body'> {
  const params = { ...input.params };
  return {
    params: (options.validateParams === false ? params : validateRequestPart(operationId, 'params', params)) as PathParams<K>,
    query: validateRequestPart<QueryParams<K>>(operationId, 'query', { ...input.query }),
    headers: validateRequestPart<Record<string, string | undefined>>(operationId, 'headers', { ...input.headers }),
  };
}

/**
 * Runs one operation of the contract for an admitted request, whatever the protocol: checks permission (authorize),
 * validates each part with the generated validators, and runs the operation's handler, inside the
 * idempotency service when openapi.yaml says the operation takes an Idempotency-Key. The status is the
 * contract's success status; a failure is an ApiError thrown (or, on an idempotent operation, the stored
 * error answer replayed as a result with its 4xx status).
 */
export function execute<K extends ExecutableOperationId>(
  operationId: K,
  request: AdmittedRequest,
  input: RawInput,
  options: ExecuteOptions<K>,
): Promise<OperationResult<ResultBody<K>>> {
  return inOperationSpan(operationId, () => executeOperation(operationId, request, input, options));
}

export type GraphQLResultBody<K extends GraphQLOperationId> = Awaited<ReturnType<GraphQLHandlers[K]>>;

/**
 * Runs an operation only GraphQL has (graphqlOperations.ts) the way `execute` runs the contract's: in
 * its span, authorized (the permissions it borrows), its handler given the same key context. It answers
 * the handler's result: no HTTP answer carries a status for it, and it takes no Idempotency-Key.
 */
export function executeGraphQLOperation<K extends GraphQLOperationId>(
  operationId: K,
  request: AdmittedRequest,
  input: GraphQLOperationInputs[K],
  options: Pick<ExecuteOptions, 'requestId' | 'settings' | 'runtime'>,
): Promise<GraphQLResultBody<K>> {
  return inOperationSpan(operationId, async (): Promise<GraphQLResultBody<K>> => {
    const key = authorizedKey(request.caller, operationId);
    const handler = graphqlHandlers[operationId] as unknown as (ctx: KeyContext<never>, input: GraphQLOperationInputs[K]) => Promise<GraphQLResultBody<K>>;
    return handler(keyContext<never>(key, request, options), input);
  });
}

/** With tracing on, a span per operation, whatever the transport (src/tracing). */
function inOperationSpan<T>(operationId: ExecutableOperationId | GraphQLOperationId, run: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return run();
  return inSpan(`operation ${operationId}`, { attributes: { 'pgw.operation_id': operationId } }, run);
}

/** What a handler of a key's operation gets; `account` only when it is the caller's own. */
function keyContext<K extends OperationId>(
  caller: KeyCaller,
  request: AdmittedRequest,
  options: Pick<ExecuteOptions, 'requestId' | 'settings' | 'runtime'>,
  idempotency?: IdempotentAttempt,
  prefetched?: PrefetchedOf<K>,
): KeyContext<K> {
  return {
    caller,
    actor: caller.actor,
    key: caller.key,
    requestId: options.requestId,
    settings: options.settings,
    runtime: options.runtime,
    ...(idempotency && { idempotency }),
    ...(prefetched && { prefetched }),
    ...(request.account?._id === caller.actor.accountId && { account: request.account }),
  };
}

async function executeOperation<K extends ExecutableOperationId>(
  operationId: K,
  request: AdmittedRequest,
  input: RawInput,
  options: ExecuteOptions<K>,
): Promise<OperationResult<ResultBody<K>>> {
  const { caller } = request;
  authorize(caller, operationId);
  const op = getOperation(operationId);
  const { params, query, headers } = validateInput(operationId, input, options);
  const rawBody = options.readBody ? await options.readBody() : input.body;
  const handler = handlers[operationId] as unknown as (ctx: KeyContext<K> | PublicContext, input: OperationInput<K>) => Promise<ResultBody<K>>;
  const { status, contentType } = successResponse(operationId);
  const run = async (idempotency?: IdempotentAttempt, prefetched?: PrefetchedOf<K>): Promise<ResultBody<K>> => {
    const body = validateRequestPart(operationId, 'body', rawBody === undefined && !op.bodyRequired ? {} : rawBody);
    const ctx: KeyContext<K> | PublicContext =
      caller.kind === 'key' ? keyContext<K>(caller, request, options, idempotency, prefetched) : { caller, requestId: options.requestId, settings: options.settings, runtime: options.runtime };
    return handler(ctx, { params, query, headers, body } as OperationInput<K>);
  };

  if (op.idempotent) {
    const { actor } = authorizedKey(caller, operationId);
    const prefetched = startBeforeClaim(operationId);
    const out = await runIdempotent(
      {
        accountId: actor.accountId,
        method: op.method.toUpperCase(),
        path: op.path,
        key: String(headers['idempotency-key']),
        body: rawBody ?? null,
        requestId: options.requestId,
      },
      async (attempt) => ({ status, body: await run(attempt, prefetched) }),
    );
    return { status: out.status, body: out.body as ResultBody<K>, json: out.json, replayed: out.replayed };
  }
  const body = await run(undefined, options.prefetched ?? startedFor(request.ahead, operationId, params));
  return contentType && contentType !== 'application/json' ? { status, body, contentType } : { status, body };
}

/** The one 2xx status openapi.yaml declares for the operation. */
export function successStatus(operationId: OperationId): number {
  return successResponse(operationId).status;
}

// eslint-disable-next-line no-restricted-syntax -- a memo of openapi.yaml's 2xx responses, the same for every gateway
const successResponses = new Map<OperationId, { status: number; contentType: string | undefined }>();

/** The operation's 2xx status and its first content type, read from the contract once per operation. */
function successResponse(operationId: OperationId): { status: number; contentType: string | undefined } {
  let found = successResponses.get(operationId);
  if (!found) {
    const types = getOperation(operationId).responseContentTypes as Record<string, readonly string[] | undefined>;
    const statuses = Object.keys(types).filter((s) => s.startsWith('2'));
    if (statuses.length !== 1) throw new Error(`openapi.yaml: ${operationId} must declare exactly one 2xx response, not ${statuses.length}`);
    found = { status: Number(statuses[0]), contentType: types[statuses[0]!]?.[0] };
    successResponses.set(operationId, found);
  }
  return found;
}

/** Whether `execute` runs this operation (every /v1 operation but the event streams). */
export function isExecutable(operationId: OperationId): operationId is ExecutableOperationId {
  return Object.hasOwn(handlers, operationId);
}
