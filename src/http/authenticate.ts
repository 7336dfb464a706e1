import type { Response } from 'express';
import type { Config } from '../config';
import { authenticate, type Admission } from '../operations/admit';
import type { KeyCaller } from '../operations/caller';
import { applyCount } from './rateLimit';

/**
 * Admission (../admit.ts) on an HTTP response, for every HTTP surface (REST, the SSE streams, GraphQL
 * over HTTP): what the request log names (res.locals), the count written as X-RateLimit-*, its 429.
 */
export function applyAdmission(res: Response, admission: Pick<Admission, 'caller' | 'count' | 'auth'>): void {
  if (admission.auth) res.locals.auth = admission.auth;
  if (admission.caller.kind === 'clientToken') res.locals.clientTokenId = admission.caller.grant.id;
  if (admission.count) applyCount(res, admission.count);
}

/** The bearer key, counted (401, 429). */
export async function authenticateKeyRequest(secret: string | undefined, res: Response, config: Config): Promise<KeyCaller> {
  const admission = await authenticate({ kind: 'key', secret }, config);
  applyAdmission(res, admission);
  return admission.caller as KeyCaller;
}
