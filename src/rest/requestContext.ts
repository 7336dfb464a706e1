import type { RequestHandler } from 'express';
import { newId } from '../ids';
import { logger } from '../logger';
import type { ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import { countRefusedRequest, isRefusal, recordRequest } from '../domain/logs/requestLogService';
import { redactPath } from '../domain/logs/redact';
import { keptBodies, requestSource } from '../http/loggedBodies';
import { httpOperation, type HttpOperationMetrics } from '../metrics/http';

/** Requests no route named (pages, docs, the dashboard, unknown paths outside /v1): one label. */
const otherRequests = httpOperation('other');

/**
 * Gives every request an id (the `Request-Id` header and `request_id` in error bodies), logs it as a
 * structured line, and records requests made with an account's key for GET /logs: method, path,
 * status, ids and the bodies, which the log redacts before writing them (domain/logs/redact.ts, the
 * path too); never headers or query strings, and the structured line never holds a body. 401 and 429
 * answers are only counted, per account and hour (with or without a key: recordRequest diverts them).
 */
export const requestContext: RequestHandler = (req, res, next) => {
  const requestId = newId('req');
  const started = process.hrtime.bigint();
  res.locals.requestId = requestId;
  res.setHeader('Request-Id', requestId);
  res.on('finish', () => {
    const elapsedNs = Number(process.hrtime.bigint() - started);
    const latencyMs = Math.round(elapsedNs / 1e6);
    // Set by the route that answered (the REST pipeline: its operationId; GraphQL; /metrics).
    ((res.locals.httpMetric as HttpOperationMetrics | undefined) ?? otherRequests).observe(res.statusCode, elapsedNs / 1e9);
    // Set by the REST pipeline or GraphQL once the key is known (an AuthenticatedKey or Authenticated).
    const auth = res.locals.auth as { key: ApiKeyRecord } | undefined;
    const errorCode = (res.locals.errorCode as string | undefined) ?? null;
    // originalUrl: routers mounted on a prefix (/v1, then each resource) strip it from req.path. A key
    // or card number pasted into a path is redacted before the log line and the stored entry see it.
    const path = redactPath(req.originalUrl.split('?')[0] ?? req.path);
    // A client token is named by its id (set by the token's authentication), never by its secret.
    const clientTokenId = res.locals.clientTokenId as string | undefined;
    logger.info({ requestId, method: req.method, path, status: res.statusCode, latencyMs, errorCode, accountId: auth?.key.account_id, clientTokenId }, 'request');
    if (auth) {
      const bodies = keptBodies(res);
      recordRequest({
        _id: requestId,
        account_id: auth.key.account_id,
        api_key_id: auth.key._id,
        method: req.method,
        path,
        status: res.statusCode,
        error_code: errorCode,
        latency_ms: latencyMs,
        created_at: new Date(),
        source: requestSource(res),
        request_body: bodies.request,
        response_body: bodies.response,
      });
    } else if (isRefusal(res.statusCode)) {
      countRefusedRequest(null, res.statusCode);
    }
  });
  next();
};
