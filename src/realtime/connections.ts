import { driverCollection } from '../db/driverCollection';
import type { ConnectionLimits } from '../config';
import { ApiKeyModel, type ApiKeyRecord } from '../domain/accounts/apiKeyModel';
import { ApiError } from '../errors';
import { logger } from '../logger';
import { rateLimitedIn } from '../metrics/domain';
import { connectionClosed, connectionOpened, type RealtimeKind } from '../metrics/gauges';

const METRIC_KIND: Record<ConnectionKind, RealtimeKind> = { ws: 'graphql_ws', sse: 'sse' };

/** The kinds of long-lived connection, and why the server ends one. */
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

/**
 * One gateway's places for long-lived connections (graphql-ws sockets, SSE streams), so that none grows
 * without bound: caps per client IP and per API key (429 `rate_limit_exceeded`), a maximum lifetime, and
 * a revoked key's connections closed. Per gateway, like its Config's caps: a client spread over N
 * gateways may hold N times as many (docs/decisions/0004-cross-instance-event-bus.md: why polling).
 */
export interface ConnectionSlots {
  /** Takes a place for a new connection of `ip` (and of `keyId` when known), or throws the 429. */
  takeSlot(kind: ConnectionKind, ip: string, keyId?: string | null): Lease;
  /** Names the key a connection acts for (graphql-ws learns it at connection_init); 429 over its cap. */
  identify(lease: Lease, keyId: string): void;
  /**
   * Gives the connection the function that ends it, and starts its lifetime. Called once the connection
   * is open (the socket upgraded, the stream's headers about to be sent).
   */
  attach(lease: Lease, close: (reason: CloseReason) => void): void;
  /** Frees the connection's places (and its subscriptions'); safe to call more than once. */
  release(lease: Lease): void;
  /** Counts a GraphQL subscription of the connection; 429 over the connection's or the key's cap. */
  addSubscription(lease: Lease, id: string): void;
  removeSubscription(lease: Lease, id: string): void;
  /**
   * Ends every connection of a revoked key at once (this process revoked it: src/server.ts hands it to
   * onKeyRevoked); a revocation elsewhere is found by polling, every `revocationCheckMs` while a keyed
   * connection is open.
   */
  closeConnectionsOfKey(keyId: string): void;
  /** Open connections of each kind (for tests and diagnostics). */
  openCounts(): { ws: number; sse: number };
  /** Stops the periodic check (gateway shutdown); the next keyed connection starts it again. */
  stopRevocationChecks(): void;
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

/** `limits`: the gateway's caps (its Config's `connections`). */
export function createConnectionSlots(limits: ConnectionLimits): ConnectionSlots {
  const leases = new Set<Lease>();
  const openByIp = new Map<string, number>();
  const openByKey = new Map<string, number>();
  const subscriptionsByKey = new Map<string, number>();
  const leasesOfKey = new Map<string, Set<Lease>>();
  let revocationTimer: NodeJS.Timeout | null = null;
  let checking = false;

  const identify = (lease: Lease, keyId: string): void => {
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
  };

  const release = (lease: Lease): void => {
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
  };

  const closeConnectionsOfKey = (keyId: string): void => {
    for (const lease of [...(leasesOfKey.get(keyId) ?? [])]) {
      try {
        lease.closer?.('revoked');
      } finally {
        release(lease);
      }
    }
  };

  const stopRevocationChecks = (): void => {
    if (revocationTimer) clearInterval(revocationTimer);
    revocationTimer = null;
  };

  const startRevocationChecks = (): void => {
    if (revocationTimer) return;
    revocationTimer = setInterval(() => void checkRevocations(), limits.revocationCheckMs);
    revocationTimer.unref();
  };

  const checkRevocations = async (): Promise<void> => {
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
  };

  return {
    takeSlot(kind, ip, keyId = null) {
      const max = kind === 'ws' ? limits.wsPerIp : limits.ssePerIp;
      if ((openByIp.get(`${kind}:${ip}`) ?? 0) >= max) throw tooMany(`${NOUN[kind]} from this IP address`, max);
      const lease = new Lease(kind, ip);
      if (keyId) identify(lease, keyId);
      leases.add(lease);
      connectionOpened(METRIC_KIND[kind]);
      bump(openByIp, `${kind}:${ip}`, 1);
      return lease;
    },
    identify,
    attach(lease, close) {
      lease.closer = close;
      const lifetime = lease.kind === 'ws' ? limits.wsLifetimeMs : limits.sseLifetimeMs;
      lease.timer = setTimeout(() => close('lifetime'), lifetime);
      lease.timer.unref();
    },
    release,
    addSubscription(lease, id) {
      if (lease.released || lease.subscriptions.has(id)) return;
      if (lease.subscriptions.size >= limits.subscriptionsPerConnection) {
        throw tooMany('subscriptions on this connection', limits.subscriptionsPerConnection);
      }
      if (lease.keyId && (subscriptionsByKey.get(lease.keyId) ?? 0) >= limits.subscriptionsPerKey) {
        throw tooMany('subscriptions for this API key', limits.subscriptionsPerKey);
      }
      lease.subscriptions.add(id);
      if (lease.keyId) bump(subscriptionsByKey, lease.keyId, 1);
    },
    removeSubscription(lease, id) {
      if (!lease.subscriptions.delete(id) || !lease.keyId) return;
      bump(subscriptionsByKey, lease.keyId, -1);
    },
    closeConnectionsOfKey,
    openCounts() {
      let ws = 0;
      for (const lease of leases) if (lease.kind === 'ws') ws++;
      return { ws, sse: leases.size - ws };
    },
    stopRevocationChecks,
  };
}
