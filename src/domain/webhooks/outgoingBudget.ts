import { monotonicMs } from '../../platform/clock/machineClock';

/**
 * How many webhook requests one gateway process may still send, per account and per target host (contract
 * decisions, "Hostile clients at the edge"), whatever caused them: a token bucket per key on the monotonic
 * clock, so that one key sends at most half its cap at once and the cap in any 60 s. A request over budget
 * waits, never fails; the maps are bounded (MAX_KEYS). More:
 * docs/decisions/notes/webhooks.md, "The outgoing budget".
 */
export const MAX_KEYS = 10_000;
const MINUTE_MS = 60_000;

export interface OutgoingLimits {
  perAccountPerMinute: number;
  perHostPerMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

class BucketMap {
  private readonly buckets = new Map<string, Bucket>();
  readonly capacity: number;
  private readonly perMs: number;

  constructor(perMinute: number) {
    this.capacity = perMinute / 2;
    this.perMs = perMinute / 2 / MINUTE_MS;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Tokens of `key` now (a key not held has a full bucket); null when the map has no room for it. */
  level(key: string, now: number): number | null {
    const b = this.buckets.get(key);
    if (b) return Math.min(this.capacity, b.tokens + (now - b.at) * this.perMs);
    if (this.buckets.size < MAX_KEYS || this.evictFull(now)) return this.capacity;
    return null;
  }

  /** How long until `key` holds `cost` tokens (0: now). */
  waitMs(key: string, cost: number, now: number): number {
    const level = this.level(key, now);
    if (level === null) return this.oldestRefillMs(now);
    return level >= cost ? 0 : Math.ceil((cost - level) / this.perMs);
  }

  take(key: string, cost: number, now: number): void {
    const level = this.level(key, now) ?? 0;
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: level - cost, at: now });
  }

  private evictFull(now: number): boolean {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.perMs >= this.capacity) this.buckets.delete(key);
    }
    return this.buckets.size < MAX_KEYS;
  }

  /** When the least recently used entry (the first: `take` moves a key to the end) will be full. */
  private oldestRefillMs(now: number): number {
    const first = this.buckets.values().next().value as Bucket | undefined;
    if (!first) return 0;
    return Math.max(1, Math.ceil((this.capacity - first.tokens) / this.perMs - (now - first.at)));
  }
}

export class OutgoingBudget {
  private readonly accounts: BucketMap;
  private readonly hosts: BucketMap;

  constructor(readonly limits: OutgoingLimits) {
    this.accounts = new BucketMap(limits.perAccountPerMinute);
    this.hosts = new BucketMap(limits.perHostPerMinute);
  }

  /**
   * Takes `cost` tokens of the account and of the host and answers 0, or takes nothing and answers how
   * long to wait. `cost` is at most 3 (a genuine request and two forged copies) and the capacities at
   * least 3 (src/config.ts: caps of 6 or more), so every cost fits in a full bucket.
   */
  tryTake(accountId: string, host: string, cost: number, now = monotonicMs()): number {
    const wait = this.waitMs(accountId, host, cost, now);
    if (wait > 0) return wait;
    this.accounts.take(accountId, cost, now);
    this.hosts.take(host, cost, now);
    return 0;
  }

  /** How long until `cost` requests of the account to the host may go (0: now); takes nothing. */
  waitMs(accountId: string, host: string, cost: number, now = monotonicMs()): number {
    return Math.max(this.accounts.waitMs(accountId, cost, now), this.hosts.waitMs(host, cost, now));
  }

  /** Entries held (diagnostics, and the bound's test). */
  sizes(): { accounts: number; hosts: number } {
    return { accounts: this.accounts.size, hosts: this.hosts.size };
  }
}
