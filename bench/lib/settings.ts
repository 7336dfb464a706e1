import { SUBSCRIBER_KINDS, type SubscriberKind } from '../fanout/protocol';

/**
 * Bench knobs, all from the environment. BENCH_SCALE shrinks or grows every count and duration at once
 * (0.1 for a smoke test); the specific variables override it.
 */
/** BENCH_FANOUT_KINDS, e.g. `multipart,graphqlSse`: which kinds, in which order; all four by default. */
function subscriberKinds(raw: string | undefined): SubscriberKind[] {
  const names = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return [...SUBSCRIBER_KINDS];
  for (const n of names) if (!SUBSCRIBER_KINDS.includes(n as SubscriberKind)) throw new Error(`BENCH_FANOUT_KINDS: '${n}' is not one of ${SUBSCRIBER_KINDS.join(', ')}`);
  return names as SubscriberKind[];
}

function num(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
  return n;
}

const scale = num('BENCH_SCALE', 1);
const scaled = (name: string, def: number, min: number) => Math.max(min, Math.round(num(name, def * scale)));

export interface BenchSettings {
  scale: number;
  /** Seconds measured per HTTP/driver row. */
  durationS: number;
  /** Seconds of unrecorded load before each row (JIT, pools, caches). */
  warmupS: number;
  /** Slices each compared row's duration is cut into; compared rows run in turns, slice by slice. */
  slices: number;
  /** Seconds of a row's own load, unmeasured, before each of its slices after the first. */
  sliceWarmupS: number;
  /** Concurrent connections (HTTP rows) or operations in flight (driver rows). */
  connections: number;
  /** Live subscribers of each kind (SSE and graphql-ws) on one gateway. */
  subscribers: number;
  /** Payments the subscribers watch (subscribers spread evenly over them). */
  fanoutPayments: number;
  /** State changes triggered per second during the fan-out measurement. */
  fanoutRate: number;
  /** Client processes holding the subscribers. */
  fanoutWorkers: number;
  /** The large fan-out row: live subscribers of each of its four kinds (2,500 each, 10,000 at scale 1). */
  largeSubscribers: number;
  /** The 10,000 row's kinds, in the order they connect (each kind's RSS is read after it connects). */
  largeKinds: SubscriberKind[];
  /** Client processes holding the large row's subscribers. */
  largeFanoutWorkers: number;
  /** Events delivered to the local webhook receiver. */
  webhookEvents: number;
  /** Events produced per second (payment creations); 0 = as fast as `connections` creators go. */
  webhookRate: number;
  /** Rows/phases to run (comma list of keys, see run.ts); empty = all. */
  only: Set<string>;
  /** Write CPU profiles of the gateway and database processes into bench/.tmp/profiles. */
  profile: boolean;
  /**
   * Run the gateway and the database from their bundles (dist/, what `npm start` runs), as bench:rail and
   * bench:scale do; BENCH_FROM_SOURCE=1 runs src/ through tsx instead (its keepNames wrappers cost CPU).
   */
  compiled: boolean;
  /** Embedded engine data directory; empty = memory only. */
  dataDir: string;
  /**
   * BENCH_GATEWAY_TREE: the request rows' gateway is that checkout's dist/main.js (built there
   * beforehand), so that an older tree is measured by this harness, beside this tree's baselines.
   */
  gatewayTree: string | undefined;
}

export function loadSettings(): BenchSettings {
  return {
    scale,
    durationS: scaled('BENCH_DURATION', 10, 2),
    warmupS: scaled('BENCH_WARMUP', 2, 1),
    slices: Math.max(1, Math.round(num('BENCH_SLICES', 4))),
    sliceWarmupS: num('BENCH_SLICE_WARMUP', 0.5),
    connections: Math.max(1, Math.round(num('BENCH_CONNECTIONS', 50))),
    subscribers: scaled('BENCH_SUBSCRIBERS', 2000, 10),
    fanoutPayments: scaled('BENCH_FANOUT_PAYMENTS', 200, 2),
    fanoutRate: num('BENCH_FANOUT_RATE', 20),
    fanoutWorkers: Math.max(1, Math.round(num('BENCH_FANOUT_WORKERS', 2))),
    largeSubscribers: scaled('BENCH_LARGE_SUBSCRIBERS', 2500, 10),
    largeKinds: subscriberKinds(process.env.BENCH_FANOUT_KINDS),
    largeFanoutWorkers: Math.max(1, Math.round(num('BENCH_LARGE_FANOUT_WORKERS', 4))),
    webhookEvents: scaled('BENCH_WEBHOOKS', 2000, 10),
    webhookRate: num('BENCH_WEBHOOK_RATE', 50),
    only: new Set(
      (process.env.BENCH_ONLY ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    profile: process.env.BENCH_PROFILE === '1' || process.env.BENCH_PROFILE === 'true',
    compiled: process.env.BENCH_FROM_SOURCE !== '1' && process.env.BENCH_FROM_SOURCE !== 'true',
    dataDir: process.env.BENCH_DATA_DIR ?? '',
    gatewayTree: process.env.BENCH_GATEWAY_TREE || undefined,
  };
}
