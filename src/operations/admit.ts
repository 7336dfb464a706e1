import type { Config } from '../config';
import type { AccountClock } from '../domain/accounts/accountModel';
import { authenticationFailed, countsKnownKeyAtOnce, type AuthenticatedKey } from '../domain/accounts/apiKeyService';
import { countKeyAndAccountRequest, hitRateLimit } from '../domain/ratelimit/rateLimitService';
import { authenticateSessionAndCount, type SessionBudget } from '../domain/sessions/sessionService';
import { authenticateClientToken, authenticateKey, keyCaller, PUBLIC_CALLER, type Caller } from './caller';
import { getOperation, type OperationId } from './contract';
import { startBeforeCount, type ReadAhead, type StartedRead } from './prefetch';
import { countPublicCall, keyRateLimits, type RateCount } from './rateLimitPolicy';

/**
 * Admission: who may run what, counted, before anything runs, one rule for every transport. Two steps,
 * because GraphQL knows what runs only once it knows the caller (`authenticate`, then `countOperations`);
 * REST calls `admit`, both at once. More: docs/decisions/notes/edge.md, "Admission".
 */

/**
 * What a request presented. `session`: a dashboard session's cookie value (src/domain/sessions), which
 * stands for its key but counts in the session's own window. The shell checks first what only it can
 * see (a cookie request's origin and CSRF rule, src/http/sessionCookie.ts).
 */
export type Credentials =
  | { kind: 'key'; secret: string | undefined }
  | { kind: 'session'; value: string }
  | { kind: 'clientToken'; token: string }
  | { kind: 'none' };

/** Where the request came from: what per-IP buckets count. */
export interface Client {
  ip: string;
}

export interface Admission {
  caller: Caller;
  /** The request's count in its window (null: nothing counted yet, a keyless request before its calls). */
  count: RateCount | null;
  /** The key's account as the count read it (its sandbox clock), for the request's handler only. */
  account?: AccountClock;
  /** The key as authenticated, for what the request log names. */
  auth?: AuthenticatedKey;
  /** A dashboard session's window: what the request runs beyond one request counts there, not in the key's. */
  budget?: SessionBudget;
  /** The read admission started beside the key's count (prefetch.ts), for the handler of its operation. */
  ahead?: StartedRead;
}

/**
 * The request as admission answered it, passed whole through `execute` to the handler: who calls, and
 * what admission read for it (the account's clock, the operation's read). Nothing per-request goes back
 * up to the shell and down again.
 */
export type AdmittedRequest = Pick<Admission, 'caller' | 'account' | 'ahead'>;

/**
 * Finds the caller and counts one request in its window: a key in its window and its account's, a
 * dashboard session (as its key) and a client token each in its own. Nothing is counted for a request
 * without credentials: what it runs is (countOperations, per public call).
 *
 * `ahead` names the read to start beside the key's count (prefetch.ts), sent in the same turn so both
 * leave in one batch (src/db/batching.ts); only for a key this process knows and let through last time
 * (countsKnownKeyAtOnce): an unknown secret, or a key refused with 429, reads nothing more.
 */
export async function authenticate(credentials: Credentials, config: Config, ahead?: ReadAhead): Promise<Admission> {
  switch (credentials.kind) {
    case 'key': {
      // Asked before the count starts, which may forget a key due for a re-read (KEY_RECHECK_MS); both run
      // in this turn, so the read is queued with the count.
      const started = ahead && countsKnownKeyAtOnce(credentials.secret) ? startBeforeCount(ahead) : undefined;
      const { caller, count, auth } = await authenticateKey(credentials.secret, config);
      return started ? { caller, count, account: auth.account, auth, ahead: started } : { caller, count, account: auth.account, auth };
    }
    case 'session': {
      const { auth, budget } = await authenticateSessionAndCount(credentials.value, config.dashboardRateLimitPerMinute);
      const count: RateCount = { decision: auth.rate, limit: budget.limit, scope: 'session' };
      return { caller: keyCaller(auth.key), count, account: auth.account, auth, budget };
    }
    case 'clientToken':
      return authenticateClientToken(credentials.token, config);
    case 'none':
      return { caller: PUBLIC_CALLER, count: null };
  }
}

/**
 * What a request runs, for counting: `requests`, how many requests it stands for (a GraphQL operation
 * with several mutation fields is that many; anything else is one), and the public operations it calls
 * (each counted in its per-IP bucket, as the public REST route it mirrors).
 */
export interface Runs {
  requests: number;
  publicCalls: readonly OperationId[];
}

/**
 * Counts what `runs` adds to the request `authenticate` counted: the requests beyond the first in the
 * key's windows (in one command: concurrent counts of one key go out together), and each public call in
 * its per-IP bucket. Stops at the first count over its limit and returns it (the caller refuses); else
 * the key's count after all of them, or the last public call's for a request without a key.
 */
export async function countOperations(admission: Admission, runs: Runs, client: Client, config: Config): Promise<RateCount | null> {
  let count = admission.count;
  const extra = runs.requests - 1;
  if (extra > 0 && admission.budget) {
    const { bucket, limit } = admission.budget;
    const decisions = await Promise.all(Array.from({ length: extra }, () => hitRateLimit(bucket, limit)));
    const refused = decisions.find((d) => !d.allowed);
    count = { decision: refused ?? decisions[decisions.length - 1]!, limit, scope: 'session' };
    if (refused) return count;
  } else if (extra > 0 && admission.auth) {
    const limits = keyRateLimits(config);
    const hash = admission.auth.key.key_hash;
    const counted = await Promise.all(Array.from({ length: extra }, () => countKeyAndAccountRequest(hash, limits)));
    // Revoked meanwhile: every count after the revocation refuses the key.
    if (counted.some((c) => c === null)) throw authenticationFailed();
    const refused = counted.find((c) => !c!.decision.allowed);
    count = { decision: (refused ?? counted[counted.length - 1]!)!.decision, limit: config.rateLimitPerMinute };
    if (refused) return count;
  }
  for (const operationId of runs.publicCalls) {
    const publicCount = await countPublicCall(operationId, client.ip, config);
    if (!publicCount.decision.allowed) return publicCount;
    // A keyless request's answer carries its public bucket's X-RateLimit-*; a key's, the key's.
    if (!admission.auth) count = publicCount;
  }
  return count;
}

/**
 * REST: the route names its one operation, and `params` its path's parameters (what a read beside the
 * count is keyed by). A public operation without a client token runs without credentials and counts in
 * its per-IP bucket; every other operation needs a key (401 otherwise).
 */
export async function admit(
  credentials: Credentials,
  client: Client,
  operationId: OperationId,
  config: Config,
  params: Record<string, unknown> = {},
): Promise<Admission> {
  const isPublic = getOperation(operationId).public;
  if (credentials.kind === 'none' && !isPublic) throw authenticationFailed();
  const admission = await authenticate(credentials, config, isPublic ? undefined : { operationId, params });
  const publicCalls = credentials.kind === 'none' ? [operationId] : [];
  const count = await countOperations(admission, { requests: 1, publicCalls }, client, config);
  return { ...admission, count };
}
