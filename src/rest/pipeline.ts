import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { authorize } from '../operations/authorize';
import { bearerSecret } from '../operations/bearer';
import { admit } from '../operations/admit';
import { getOperation, parameterSchema, type Operation } from '../operations/contract';
import { execute, isExecutable, validateInput, type OperationResult, type RawInput } from '../operations/execute';
import { applyAdmission } from '../http/authenticate';
import { readJsonBody } from '../http/body';
import { keepResponseBody } from '../http/loggedBodies';
import { clientIp } from '../http/rateLimit';
import { gatewaySettings } from '../operations/settings';
import type { ApiOperationId } from '../operations/types';
import { restCredentials } from './credentials';
import { deprecationHeaders } from './deprecation';
import { streamRoutes } from './streams';
import { nameRequestSpan, tracingOn } from '../tracing/tracing';
import { httpOperation } from '../metrics/http';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { Realtime } from '../realtime/createRealtime';

/**
 * The REST shell of an operation: Express request -> caller + input -> operations/execute -> response.
 * Authentication and the rate limit come first (the bearer key; on a public operation a client token
 * where the contract takes one, else the client IP's bucket), then execute checks permission, validates
 * with the generated validators and runs the handler (in the idempotency service where the contract says
 * so). The event streams (./streams.ts) write the response themselves after the same checks.
 */
/** `realtime`: the gateway's realtime layer, in which its stream operations open their streams. */
export function toExpressHandler(operationId: ApiOperationId, config: Config, runtime: GatewayRuntime, realtime: Realtime): RequestHandler {
  const op = getOperation(operationId);
  // A public operation takes a client token where openapi.yaml declares its `client_token` parameter.
  const takesClientToken = op.public && declaresClientToken(operationId);
  const stream = isExecutable(operationId) ? undefined : streamRoutes[operationId];
  if (!isExecutable(operationId) && !stream) throw new Error(`${operationId}: openapi.yaml declares it but nothing serves it`);
  // This gateway's, read from its Config once its port (and so the default public URL) is known.
  const settings = gatewaySettings(config);
  const route = `/v1${op.expressPath}`;
  // The operation's metric children, made once: requestContext observes them when the answer is sent.
  const metrics = httpOperation(operationId);
  // Null unless openapi.yaml marks the route or one of its parameters deprecated (./deprecation.ts).
  const deprecated = deprecationHeaders(op);
  return async (req, res, next) => {
    res.locals.httpMetric = metrics;
    if (deprecated) res.set(deprecated(req) ?? {});
    if (tracingOn()) nameRequestSpan(req.method, route, operationId);
    try {
      const requestId = res.locals.requestId as string;
      // The one admission of every transport (operations/admit.ts): the caller found and counted, and
      // the request as admitted, which goes whole to execute.
      const admission = await admit(restCredentials(req, op.public, takesClientToken), { ip: clientIp(req) }, operationId, config, req.params);
      applyAdmission(res, admission);
      const { caller } = admission;
      // validateInput copies each part before its validator coerces it: nothing here writes to req.
      const input: RawInput = { params: req.params, query: req.query as Record<string, unknown>, headers: req.headers };
      if (stream) {
        authorize(caller, operationId);
        await stream({ caller, ip: clientIp(req), req, res, realtime }, validateInput(operationId, input));
        return;
      }
      const result = await execute(operationId as Exclude<typeof operationId, keyof typeof streamRoutes>, admission, input, {
        requestId,
        settings,
        runtime,
        readBody: () => readBodyFor(req, op, config.maxBodyBytes),
      });
      send(req, res, result);
    } catch (err) {
      next(err);
    }
  };
}

function declaresClientToken(operationId: ApiOperationId): boolean {
  try {
    parameterSchema(operationId, 'query', 'client_token');
    return true;
  } catch {
    return false;
  }
}

function send(req: Request, res: Response, result: OperationResult): void {
  if (result.json !== undefined) {
    if (result.replayed) res.setHeader('Idempotency-Replayed', 'true');
    if (result.status >= 400) {
      const code = (result.body as { error?: { code?: string } })?.error?.code;
      if (code) res.locals.errorCode = code;
    }
    // The JSON text the key stored: the same bytes now and on every replay, serialized once.
    sendJson(req, res, result.status, result.json);
    return;
  }
  if (result.contentType) {
    if (typeof result.body === 'string') keepResponseBody(res, result.body);
    res.status(result.status).type(result.contentType).send(result.body);
    return;
  }
  // A body JSON cannot write (undefined) is answered as Express answers it; every operation has one.
  const text = JSON.stringify(result.body) as string | undefined;
  if (text === undefined) res.status(result.status).json(result.body);
  else sendJson(req, res, result.status, text);
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * JSON text as Express's `res.type('application/json').send(text)` answers it (the same status and
 * headers, HEAD without a body), without what that costs every answer: a MIME lookup, parsing and
 * formatting the content type again for its charset, settings lookups. A conditional request
 * (If-None-Match, If-Modified-Since) still goes through Express, which decides whether it is a 304.
 */
function sendJson(req: Request, res: Response, status: number, text: string): void {
  keepResponseBody(res, text);
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) {
    res.send(text);
    return;
  }
  res.setHeader('Content-Length', Buffer.byteLength(text));
  if (req.method === 'HEAD') res.end();
  else res.end(text, 'utf8');
}

async function readBodyFor(req: Request, op: Pick<Operation, 'hasBody'>, maxBytes: number): Promise<unknown> {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE') return undefined;
  const body = await readJsonBody(req, maxBytes);
  // Some HTTP clients send `{}` on every POST; only a body with content is refused.
  const empty = typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
  if (body !== undefined && !op.hasBody && !empty) {
    throw ApiError.invalid('This operation takes no request body');
  }
  return body;
}

export function bearerToken(req: Request): string | undefined {
  return bearerSecret(req.headers.authorization);
}
