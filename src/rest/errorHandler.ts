import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { ApiError, isApiError } from '../errors';
import { keepResponseBody } from '../http/loggedBodies';
import { logger } from '../logger';
import { redactPath } from '../domain/logs/redact';
import { unavailableError } from '../db/unavailable';

export interface ErrorEnvelope {
  error: { code: string; message: string; request_id: string };
}

export function errorEnvelope(err: ApiError, requestId: string): ErrorEnvelope {
  return { error: { code: err.code, message: err.message, request_id: requestId } };
}

/**
 * What an error thrown while serving a REST request answers: ApiErrors carry their own code and
 * status; body parser failures from Express are translated; anything else is an internal error whose
 * details go to the log (here, once), never to the client.
 */
export function toApiError(err: unknown, req: Request, requestId: string): ApiError {
  if (isApiError(err)) return err;
  if (err && typeof err === 'object' && 'type' in err && err.type === 'entity.too.large') {
    return new ApiError('payload_too_large', 'Request body is too large');
  }
  if (err && typeof err === 'object' && 'type' in err && err.type === 'entity.parse.failed') {
    return new ApiError('invalid_json', 'Request body is not valid JSON');
  }
  if (err instanceof URIError) {
    // The router could not percent-decode a path parameter (e.g. /payment_intents/%zz): no object can
    // have that id, and 404 is what every operation with a path parameter declares.
    return new ApiError('resource_not_found', `No such object: the URL path is not valid percent-encoding (${req.method} ${req.path})`);
  }
  const unavailable = unavailableError(err);
  if (unavailable) {
    logger.warn({ err, requestId, method: req.method, path: redactPath(req.path) }, 'database unavailable: answered 503');
    return unavailable;
  }
  logger.error({ err, requestId, method: req.method, path: redactPath(req.path) }, 'unhandled error');
  return new ApiError('internal_error', 'An internal error occurred. Retry with the same Idempotency-Key.');
}

/** The one place REST turns errors into responses. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const requestId = String(res.locals.requestId ?? '');
  const apiError = toApiError(err, req, requestId);
  res.locals.errorCode = apiError.code;
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
  // Serialized here rather than by res.json, so that the log keeps the very text sent.
  const text = JSON.stringify(errorEnvelope(apiError, requestId));
  keepResponseBody(res, text);
  res.status(apiError.status).type('application/json').send(text);
};

/** Unknown routes, and known paths with a method they do not have, are 404 resource_not_found. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError('resource_not_found', `Unrecognized request URL (${req.method} ${req.path})`));
};
