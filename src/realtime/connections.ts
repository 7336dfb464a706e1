import { driverCollection } from '../db/driverCollection';
import type { ConnectionLimits } from '../config';
import { loadConfig } from '../config';
import { ApiKeyModel, type ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import { ApiError } from '../errors';
import { logger } from '../logger';
import { rateLimitedIn } from '../metrics/domain';
import { connectionClosed, connectionOpened, type RealtimeKind } from '../metrics/gauges';

const METRIC_KIND: Record<ConnectionKind, RealtimeKind> = { ws: 'graphql_ws', sse: 'sse' };

/**
 * The long-lived connections this process holds (graphql-ws sockets, SSE streams), so that none of
 * them grows without bound:
 * - caps per client IP and per API key on how many are open at once, and on GraphQL subscriptions per
 *   socket and per key (`takeSlot`, `identify`, `addSubscription` throw 429 `rate_limit_exceeded`);
 * - a maximum lifetime, after which the connection is closed and the client reconnects and resumes
 *   (SSE with Last-Event-ID, graphql-ws by subscribing again);
 * - a key's connections close as soon as the key is revoked: at once when this process revoked it
 *   (`closeConnectionsOfKey`), within KEY_REVOCATION_CHECK_MS when another did, by polling for the
 *   revoked keys among those holding connections here, only while there are such connections (why
 *   polling: docs/decisions/0004-cross-instance-event-bus.md).
 * The caps count this process's connections: a client spread over N gateway processes may hold N times
 * as many. They bound what one client can make one process hold.
 */
export type ConnectionKind = 'ws' | 'sse';
/** Why the server ends a connection: its key was revoked, or it reached its maximum lifetime. */
export type CloseReason = 'revoked' | 'lifetime';

export class Lease {
  keyId: string | null = null;
  readonly subscriptions = new Set<string>();
  closer: ((reason: CloseReason) => void) | null = null;
  timer: NodeJS.Timeout | null = null;
  released = false;
  constructor(
    readonly kind: ConnectionKind,
    readonly ip: string,
  ) {}
}

/* eslint-disable no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): the caps are the last started gateway's, and count every gateway's connections */
let limits: ConnectionLimits = loadConfig({}).connections;
const leases = new Set<Lease>();
const openByIp = new Map<string, number>();
const openByKey = new Map<string, number>();
const subscriptionsByKey = new Map<string, number>();
const leasesOfKey = new Map<string, Set<Lease>>();
let revocationTimer: NodeJS.Timeout | null = null;
let checking = false;
/* eslint-enable no-restricted-syntax */

/** The gateway's caps (realtimeService at start); until then, the defaults. */
export function configureConnectionLimits(next: ConnectionLimits): void {
  limits = next;
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}

/** Retry-After of a connection cap: nothing says when a slot frees, so a short, fixed wait. */
const CAP_RETRY_AFTER_SECONDS = 10;

function tooMany(what: string, max: number): ApiError {
  rateLimitedIn('connections').inc();
  return new ApiError('rate_limit_exceeded', `Too many ${what}: at most ${max} at once. Close one or retry later.`, {
    'Retry-After': String(CAP_RETRY_AFTER_SECONDS),
  });
}

const NOUN: Record<ConnectionKind, string> = { ws: 'WebSocket connections', sse: 'event streams' };

/** Takes a place for a new connection of `ip` (and of `keyId` when known), or throws the 429. */
export function takeSlot(kind: ConnectionKind, ip: string, keyId: string | null = null): Lease {
  const max = kind === 'ws' ? limits.wsPerIp : limits.ssePerIp;
  if ((openByIp.get(`${kind}:${ip}`) ?? 0) >= max) throw tooMany(`${NOUN[kind]} from this IP address`, max);
  const lease = new Lease(kind, ip);
  if (keyId) identify(lease, keyId);
  leases.add(lease);
  connectionOpened(METRIC_KIND[kind]);
  bump(openByIp, `${kind}:${ip}`, 1);
  return lease;
}

/** Names the key a connection acts for (graphql-ws learns it at connection_init); 429 over its cap. */
export function identify(lease: Lease, keyId: string): void {
  if (lease.keyId === keyId) return;
  if (lease.keyId !== null) throw new Error('a connection acts for one key');
  const max = lease.kind === 'ws' ? limits.wsPerKey : limits.ssePerKey;
  if ((openByKey.get(`${lease.kind}:${keyId}`) ?? 0) >= max) throw tooMany(`${NOUN[lease.kind]} for this API key`, max);
  lease.keyId = keyId;
  bump(openByKey, `${lease.kind}:${keyId}`, 1);
  let set = leasesOfKey.get(keyId);
  if (!set) leasesOfKey.set(keyId, (set = new Set()));
  set.add(lease);
  startRevocationChecks();
}

/**
 * Gives the connection the function that ends it, and starts its lifetime. Called once the connection
 * is open (the socket upgraded, the stream's headers about to be sent).
 */
export function attach(lease: Lease, close: (reason: CloseReason) => void): void {
  lease.closer = close;
  const lifetime = lease.kind === 'ws' ? limits.wsLifetimeMs : limits.sseLifetimeMs;
  lease.timer = setTimeout(() => close('lifetime'), lifetime);
  lease.timer.unref();
}

/** Frees the connection's places (and its subscriptions'); safe to call more than once. */
export function release(lease: Lease): void {
  if (lease.released) return;
  lease.released = true;
  if (lease.timer) clearTimeout(lease.timer);
  leases.delete(lease);
  connectionClosed(METRIC_KIND[lease.kind]);
  bump(openByIp, `${lease.kind}:${lease.ip}`, -1);
  if (lease.keyId) {
    bump(openByKey, `${lease.kind}:${lease.keyId}`, -1);
    bump(subscriptionsByKey, lease.keyId, -lease.subscriptions.size);
    const set = leasesOfKey.get(lease.keyId);
    set?.delete(lease);
    if (set?.size === 0) leasesOfKey.delete(lease.keyId);
  }
  lease.subscriptions.clear();
}

/** Counts a GraphQL subscription of the socket; 429 over the socket's or the key's cap. */
export function addSubscription(lease: Lease, id: string): void {
  if (lease.released || lease.subscriptions.has(id)) return;
  if (lease.subscriptions.size >= limits.subscriptionsPerConnection) {
    throw tooMany('subscriptions on this connection', limits.subscriptionsPerConnection);
  }
  if (lease.keyId && (subscriptionsByKey.get(lease.keyId) ?? 0) >= limits.subscriptionsPerKey) {
    throw tooMany('subscriptions for this API key', limits.subscriptionsPerKey);
  }
  lease.subscriptions.add(id);
  if (lease.keyId) bump(subscriptionsByKey, lease.keyId, 1);
}

export function removeSubscription(lease: Lease, id: string): void {
  if (!lease.subscriptions.delete(id) || !lease.keyId) return;
  bump(subscriptionsByKey, lease.keyId, -1);
}

/** Ends every connection of a revoked key in this process. */
export function closeConnectionsOfKey(keyId: string): void {
  for (const lease of [...(leasesOfKey.get(keyId) ?? [])]) {
    try {
      lease.closer?.('revoked');
    } finally {
      release(lease);
    }
  }
}

export function openConnectionCounts(): { ws: number; sse: number } {
  let ws = 0;
  for (const lease of leases) if (lease.kind === 'ws') ws++;
  return { ws, sse: leases.size - ws };
}

function startRevocationChecks(): void {
  if (revocationTimer) return;
  revocationTimer = setInterval(() => void checkRevocations(), limits.revocationCheckMs);
  revocationTimer.unref();
}

/** Stops the periodic check (gateway shutdown); the next keyed connection starts it again. */
export function stopRevocationChecks(): void {
  if (revocationTimer) clearInterval(revocationTimer);
  revocationTimer = null;
}

async function checkRevocations(): Promise<void> {
  if (leasesOfKey.size === 0) return stopRevocationChecks();
  if (checking) return;
  checking = true;
  try {
    const keys = driverCollection<ApiKeyRecord>(ApiKeyModel);
    const revoked = await keys
      .find({ _id: { $in: [...leasesOfKey.keys()] }, revoked_at: { $ne: null } }, { projection: { _id: 1 } })
      .toArray();
    for (const { _id } of revoked) closeConnectionsOfKey(_id);
  } catch (err) {
    logger.warn({ err }, 'could not check open connections for revoked keys');
  } finally {
    checking = false;
  }
}
