import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { runIdempotent, type IdempotentAttempt } from '../domain/idempotency/idempotency.service';
import { readJsonBody } from '../operations/http/body';
import { authorize } from '../operations/authorize';
import { bearerSecret } from '../operations/bearer';
import { authenticateKeyRequest } from '../operations/http/authenticate';
import type { RouteDefinition, RouteInput, RouteResult } from './defineRoute';
import { getOperation } from '../operations/contract';
import { clientIp, enforceRateLimit } from '../operations/http/rateLimit';
import { ipBucket, publicBucketLimit, publicBucketOf } from '../operations/rateLimitPolicy';
import { validateRequestPart } from '../operations/validation';
import { optionalClientToken, refuseClientTokenOnKeyRoute } from './clientTokenAuth';

/**
 * Turns a route definition into an Express handler. Every REST operation goes through the same steps,
 * in this order: authenticate (or identify the client IP on public routes), count the rate limit,
 * check the key's permission, read and validate the request with the generated validators, run the
 * handler (inside the idempotency service when the operation takes an Idempotency-Key), send.
 */
export function toExpressHandler(def: RouteDefinition, config: Config): RequestHandler {
  const op = getOperation(def.operationId);
  // openapi.yaml (x-permission) and the router must agree on who may call an operation.
  const declared = 'public' in def.options ? null : def.options.permission;
  if (declared !== op.permission) {
    throw new Error(`${def.operationId}: router requires ${declared} but openapi.yaml x-permission says ${op.permission}`);
  }
  return async (req, res, next) => {
    try {
      const requestId = res.locals.requestId as string;
      const ip = clientIp(req);
      let ctx: Record<string, unknown>;
      if ('public' in def.options) {
        // A client token, on the routes that take one, counts on the token instead of the IP.
        const clientToken = def.options.clientToken ? await optionalClientToken(req, res, config) : null;
        const bucket = publicBucketOf(def.operationId);
        if (!clientToken) await enforceRateLimit(res, ipBucket(bucket, ip), publicBucketLimit(bucket, config));
        ctx = { requestId, ip, req, res, ...(clientToken && { clientToken }) };
      } else {
        await refuseClientTokenOnKeyRoute(req, res, config);
        // One round trip finds the key and counts the request in its rate-limit window.
        const caller = await authenticateKeyRequest(bearerToken(req), res, config);
        authorize(caller, def.operationId);
        ctx = { requestId, ip, req, res, actor: caller.actor, key: caller.key };
      }

      const params = validateRequestPart(def.operationId, 'params', { ...req.params });
      const query = validateRequestPart(def.operationId, 'query', { ...(req.query as object) });
      const headers = validateRequestPart<Record<string, string | undefined>>(def.operationId, 'headers', { ...req.headers });
      const rawBody = await readBodyFor(req, op, config.maxBodyBytes);

      const run = async (idempotency?: IdempotentAttempt): Promise<RouteResult | void> => {
        const body = validateRequestPart(def.operationId, 'body', rawBody === undefined && !op.bodyRequired ? {} : rawBody);
        const input: RouteInput = { body, query, params, headers };
        return (def.handler as (c: unknown, i: RouteInput) => Promise<RouteResult | void>)(idempotency ? { ...ctx, idempotency } : ctx, input);
      };

      if (!('public' in def.options) && def.options.idempotent) {
        const actor = ctx.actor as { accountId: string };
        const out = await runIdempotent(
          {
            accountId: actor.accountId,
            method: op.method.toUpperCase(),
            path: op.path,
            key: String(headers['idempotency-key']),
            body: rawBody ?? null,
            requestId,
          },
          async (attempt) => {
            const result = await run(attempt);
            if (!result) throw new Error('idempotent handlers must return a result');
            return { status: result.status, body: result.body };
          },
        );
        if (out.replayed) res.setHeader('Idempotency-Replayed', 'true');
        if (out.status >= 400) {
          const code = (out.body as { error?: { code?: string } })?.error?.code;
          if (code) res.locals.errorCode = code;
        }
        // The JSON text the key stored: the same bytes now and on every replay, serialized once.
        res.status(out.status).type('application/json').send(out.json);
        return;
      }

      const result = await run();
      if (result) send(res, result);
    } catch (err) {
      next(err);
    }
  };
}

function send(res: Response, result: RouteResult): void {
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  res.status(result.status);
  if (result.contentType) {
    res.type(result.contentType).send(result.body);
  } else if (result.body === undefined) {
    res.end();
  } else {
    res.json(result.body);
  }
}

async function readBodyFor(req: Request, op: { hasBody: boolean }, maxBytes: number): Promise<unknown> {
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
