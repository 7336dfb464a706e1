import { logger } from '../../logger';
import { claim, runClaimed } from './timer.runner';

/**
 * The poller: every `pollMs` (TIMER_POLL_MS) each process claims due timers, one findOneAndUpdate each,
 * and runs up to `concurrency` at once. Timers scheduled in this process for the next minute also arm a
 * setTimeout that wakes the poller at their due time (the claim still decides who runs them).
 */
const FAST_PATH_WINDOW_MS = 60_000;

interface ServiceState {
  pollMs: number;
  concurrency: number;
  interval: NodeJS.Timeout;
  running: Set<Promise<unknown>>;
  polling: Promise<void> | null;
  again: boolean;
  stopping: boolean;
  wakeups: Set<NodeJS.Timeout>;
}

let service: ServiceState | null = null;

export function startTimerService(opts: { pollMs?: number; concurrency?: number } = {}): void {
  if (service) return;
  const pollMs = opts.pollMs ?? 100;
  service = {
    pollMs,
    concurrency: opts.concurrency ?? 16,
    interval: setInterval(() => void pollNow(), pollMs),
    running: new Set(),
    polling: null,
    again: false,
    stopping: false,
    wakeups: new Set(),
  };
  service.interval.unref();
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
  for (const t of s.wakeups) clearTimeout(t);
  s.wakeups.clear();
  if (s.polling) await s.polling.catch(() => undefined);
  await Promise.allSettled([...s.running]);
  service = null;
}

/** In-process fast path: wake the poller exactly when a soon-due timer becomes due. */
export function armFastPath(fireAt: number): void {
  const s = service;
  if (!s || s.stopping) return;
  const delay = fireAt - Date.now();
  if (delay > FAST_PATH_WINDOW_MS) return;
  const t = setTimeout(() => {
    s.wakeups.delete(t);
    void pollNow();
  }, Math.max(0, delay) + 1);
  t.unref();
  s.wakeups.add(t);
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
    const now = Date.now();
    const rec =
      (await claim({ state: 'scheduled', fire_at: { $lte: now } }, { fire_at: 1, created_at: 1 })) ??
      // Leases of processes that died mid-handler.
      (await claim({ state: 'running', lease_until: { $lte: now } }, { lease_until: 1 }));
    if (!rec) return;
    const p: Promise<unknown> = runClaimed(rec, false).finally(() => {
      s.running.delete(p);
      // A free slot: look for more work at once rather than at the next tick.
      if (!s.stopping) void pollNow();
    });
    s.running.add(p);
  }
}

