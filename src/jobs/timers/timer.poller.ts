import { logger } from '../../logger';
import { TimerModel } from './timer.model';
import { claimBatch, runClaimed } from './timer.runner';

/**
 * The poller: every `pollMs` (TIMER_POLL_MS) each process claims due timers in batches (claimBatch: three
 * commands per batch, whatever its size) and runs up to `concurrency` handlers at once; a handler that
 * finishes frees a slot and pulls more at once. Timers scheduled in this process for the next minute also
 * wake the poller at their due time, rounded up to a WAKE_GRAIN_MS slot so that hundreds of timers due
 * per second share a few setTimeouts (the claim still decides who runs them).
 * Finished timers are kept for `retentionMs` (diagnostics, "fired once" checks), then deleted in bounded
 * batches, so the claim index carries only recent history.
 */
const FAST_PATH_WINDOW_MS = 60_000;
const WAKE_GRAIN_MS = 10;
const CLAIM_ORDER = { fire_at: 1, created_at: 1 } as const;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1_000;
/** At most this many finished timers deleted per pruning round; the rest wait for the next one. */
const PRUNE_MAX_PER_ROUND = 20_000;

interface ServiceState {
  pollMs: number;
  concurrency: number;
  interval: NodeJS.Timeout;
  running: Set<Promise<unknown>>;
  polling: Promise<void> | null;
  again: boolean;
  stopping: boolean;
  /** Pending wake-ups by due slot (ms, a multiple of WAKE_GRAIN_MS). */
  wakeups: Map<number, NodeJS.Timeout>;
  retentionMs: number;
  prune: NodeJS.Timeout;
  pruning: Promise<void> | null;
}

let service: ServiceState | null = null;

export function startTimerService(opts: { pollMs?: number; concurrency?: number; retentionMs?: number } = {}): void {
  if (service) return;
  const pollMs = opts.pollMs ?? 100;
  const s: ServiceState = {
    pollMs,
    concurrency: opts.concurrency ?? 64,
    interval: setInterval(() => void pollNow(), pollMs),
    running: new Set(),
    polling: null,
    again: false,
    stopping: false,
    wakeups: new Map(),
    retentionMs: opts.retentionMs ?? 24 * 3_600_000,
    prune: setInterval(() => {
      s.pruning ??= pruneFinishedTimers(Date.now() - s.retentionMs, () => s.stopping)
        .then(
          () => undefined,
          (err: unknown) => logger.warn({ err }, 'could not prune finished timers'),
        )
        .finally(() => (s.pruning = null));
    }, PRUNE_EVERY_MS),
    pruning: null,
  };
  service = s;
  s.interval.unref();
  s.prune.unref();
  void pollNow();
}

export function timerServiceRunning(): boolean {
  return service !== null && !service.stopping;
}

/** Stops polling and waits for the handlers that are running. */
export async function stopTimerService(): Promise<void> {
  const s = service;
  if (!s) return;
  s.stopping = true;
  clearInterval(s.interval);
  clearInterval(s.prune);
  for (const t of s.wakeups.values()) clearTimeout(t);
  s.wakeups.clear();
  if (s.polling) await s.polling.catch(() => undefined);
  if (s.pruning) await s.pruning;
  await Promise.allSettled([...s.running]);
  service = null;
}

/** In-process fast path: wake the poller exactly when a soon-due timer becomes due. */
export function armFastPath(fireAt: number): void {
  const s = service;
  if (!s || s.stopping) return;
  const delay = fireAt - Date.now();
  if (delay > FAST_PATH_WINDOW_MS) return;
  const slot = Math.ceil((fireAt + 1) / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
  if (s.wakeups.has(slot)) return;
  const t = setTimeout(() => {
    s.wakeups.delete(slot);
    void pollNow();
  }, Math.max(0, slot - Date.now()));
  t.unref();
  s.wakeups.set(slot, t);
}

export function pollNow(): Promise<void> {
  const s = service;
  if (!s || s.stopping) return Promise.resolve();
  if (s.polling) {
    s.again = true;
    return s.polling;
  }
  s.polling = (async () => {
    do {
      s.again = false;
      await pollOnce(s);
    } while (s.again && !s.stopping);
  })()
    .catch((err: unknown) => logger.error({ err }, 'timer poll failed'))
    .finally(() => {
      s.polling = null;
    });
  return s.polling;
}

async function pollOnce(s: ServiceState): Promise<void> {
  while (!s.stopping && s.running.size < s.concurrency) {
    const free = s.concurrency - s.running.size;
    const now = Date.now();
    let batch = await claimBatch({ state: 'scheduled', fire_at: { $lte: now } }, CLAIM_ORDER, free);
    // Leases of processes that died mid-handler.
    if (batch.length === 0) batch = await claimBatch({ state: 'running', lease_until: { $lte: now } }, CLAIM_ORDER, free);
    if (batch.length === 0) return;
    for (const rec of batch) {
      const p: Promise<unknown> = runClaimed(rec, false).finally(() => {
        s.running.delete(p);
        // A free slot: look for more work at once rather than at the next tick.
        if (!s.stopping) void pollNow();
      });
      s.running.add(p);
    }
  }
}

/**
 * Deletes timers finished (done or cancelled) and due before `before` (real time, ms), walking the claim
 * index in batches. Returns how many it deleted.
 */
export async function pruneFinishedTimers(before: number, stop: () => boolean = () => false): Promise<number> {
  let total = 0;
  for (const state of ['done', 'cancelled'] as const) {
    let deleted = 0;
    while (deleted < PRUNE_MAX_PER_ROUND && !stop()) {
      const old = await TimerModel.find({ state, fire_at: { $lt: before } }, { _id: 1 }).sort(CLAIM_ORDER).limit(PRUNE_BATCH).lean();
      if (old.length === 0) break;
      const res = await TimerModel.deleteMany({ _id: { $in: old.map((d) => d._id) }, state });
      deleted += res.deletedCount;
      if (old.length < PRUNE_BATCH) break;
    }
    total += deleted;
  }
  return total;
}
