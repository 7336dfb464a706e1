import { logger } from '../../logger';
import { claimBatch, createTimerRegistry, renewOwnLeases, runClaimed, type TimerRegistry } from './timerRunner';
import { MACHINE_CLOCK, STEP_TOLERANCE_MS, machineBase, monotonicMs, wallClockSteps } from '../clock/machineClock';
import { TimerModel } from './timerModel';
import { useAccountClock, type AccountOffsetLookup } from './accountClock';

/**
 * The poller: every `pollMs` (TIMER_POLL_MS) each process claims due timers in batches (claimBatch: two
 * commands per batch, whatever its size) and runs up to `concurrency` handlers at once; while a backlog is
 * due (the last claim filled every free slot), a handler that finishes pulls more at once. Timers scheduled in this process for the next minute also
 * wake the poller at their due time, rounded up to a WAKE_GRAIN_MS slot so that hundreds of timers due
 * per second share a few setTimeouts and a few claims (the claim still decides who runs them).
 * Finished timers leave the claim index when they finish (it is partial on `state: scheduled`); the TTL
 * index on `done_at` deletes them later (timerModel.ts).
 */
const FAST_PATH_WINDOW_MS = 60_000;
/**
 * A claim costs the same few commands whatever it carries, so the grain sets how many timers share them
 * (and the rail steps it starts share their batched reads and writes): at 300 express payments/s (600
 * rail steps/s) a 10 ms slot claimed about 6, a 25 ms slot about 15, a 50 ms slot about 30. The rail's
 * +2 s / +5 s may be up to one slot late. bench:rail gave payment.succeeded p99 1,144 / 415 ms late with
 * 10 ms and 293 / 291 ms with 25 ms (runs alternated, gateway CPU 50-52 s against 49 s); journaled, 420 /
 * 373 / 436 ms with 25 ms and 296 / 295 / 462 ms with 50 ms (alternated, gateway CPU 50.7-51.8 s against
 * 49.1-49.9 s).
 */
const WAKE_GRAIN_MS = 50;
/** The orders of the partial indexes `scheduled_by_fire_at` and `running_by_lease_until`. */
const CLAIM_ORDER = { fire_at: 1, created_at: 1 } as const;
const RECOVERY_ORDER = { lease_until: 1 } as const;
const RECOVERY_EVERY_MS = 1_000;
/**
 * Handlers in flight per process. They spend their time waiting on the database, so under load the slots,
 * not the CPU, cap the drain (slots / handler latency): at 200 express payments/s in one process, 64 slots
 * left the rail 6 s late and 128 2 s (bench/profile/timerDrain.ts). At 300/s with a data directory, where
 * each write also waits for the journal, 128 slots fell behind for good (bench:rail journaled, four runs:
 * payment.succeeded p99 8.4-14.6 s late) and 512 kept up (three runs: 0.8-4.6 s). A claim takes at most the
 * free slots, so of a burst larger than that a second process gets the rest.
 */
const DEFAULT_CONCURRENCY = 512;

interface ServiceState {
  /** The gateway's handlers: they run the timers its poller claims. */
  registry: TimerRegistry;
  pollMs: number;
  concurrency: number;
  interval: NodeJS.Timeout;
  running: Set<Promise<unknown>>;
  polling: Promise<void> | null;
  again: boolean;
  stopping: boolean;
  /** Pending wake-ups by due slot (ms, a multiple of WAKE_GRAIN_MS). */
  wakeups: Map<number, NodeJS.Timeout>;
  /** The last claim filled every free slot, so more timers may be due than were taken. */
  backlog: boolean;
  /** Monotonic time (ms, machineClock.ts) of the next look for expired leases. */
  recoverAt: number;
  /** wallClockSteps() as of the last realignment. */
  stepsSeen: number;
}

/**
 * A gateway's timers: its handlers, its poller, or where its soon-due timers are announced when it runs
 * none (remoteWake). Each gateway builds its own (src/domain/gatewayRuntime.ts) and hands it to what
 * schedules or runs timers, so one gateway's poller never runs another's handlers, and stopping one
 * leaves the other's running.
 */
export interface GatewayTimers extends TimerRegistry {
  service: ServiceState | null;
  /**
   * Where this gateway's soon-due timers are announced when it runs no poller of its own: the gateway's
   * HTTP thread, when a background thread runs the timers (src/background). One message per wake-up slot.
   */
  remoteWake: ((fireAt: number) => void) | null;
  remoteSlots: Set<number>;
}

export function createGatewayTimers(): GatewayTimers {
  return { ...createTimerRegistry(), service: null, remoteWake: null, remoteSlots: new Set() };
}

/**
 * Starts the gateway's poller (a no-op when it runs one). `accountOffsetMs` reads an account's sandbox
 * clock offset (the domain's lookup; see accountClock.ts).
 */
export function startTimerService(g: GatewayTimers, opts: { accountOffsetMs: AccountOffsetLookup; pollMs?: number; concurrency?: number }): void {
  useAccountClock(opts.accountOffsetMs);
  if (g.service) return;
  const pollMs = opts.pollMs ?? 100;
  const s: ServiceState = {
    registry: g,
    pollMs,
    concurrency: opts.concurrency ?? DEFAULT_CONCURRENCY,
    interval: setInterval(() => void pollService(s), pollMs),
    running: new Set(),
    polling: null,
    again: false,
    stopping: false,
    wakeups: new Map(),
    backlog: false,
    recoverAt: 0,
    stepsSeen: wallClockSteps(),
  };
  g.service = s;
  s.interval.unref();
  void pollService(s);
}

export function timerServiceRunning(g: GatewayTimers): boolean {
  const s = g.service;
  return !!s && !s.stopping;
}

/** Stops polling and waits for the handlers that are running. */
export async function stopTimerService(g: GatewayTimers): Promise<void> {
  const s = g.service;
  if (!s) return;
  s.stopping = true;
  clearInterval(s.interval);
  for (const t of s.wakeups.values()) clearTimeout(t);
  s.wakeups.clear();
  if (s.polling) await s.polling.catch(() => undefined);
  await Promise.allSettled([...s.running]);
  if (g.service === s) g.service = null;
}

/** Where the gateway's soon-due timers are announced when it runs no poller (null: nowhere). */
export function wakeElsewhere(g: GatewayTimers, wake: ((fireAt: number) => void) | null): void {
  g.remoteWake = wake;
  g.remoteSlots.clear();
}

/** In-process fast path: wake the poller exactly when a soon-due timer becomes due. */
export function armFastPath(g: GatewayTimers, fireAt: number): void {
  const delay = fireAt - Date.now();
  if (delay > FAST_PATH_WINDOW_MS) return;
  const slot = Math.ceil((fireAt + 1) / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
  const s = g.service;
  if ((!s || s.stopping) && g.remoteWake) {
    const slots = g.remoteSlots;
    if (slots.has(slot)) return;
    slots.add(slot);
    setTimeout(() => slots.delete(slot), Math.max(0, slot - Date.now())).unref();
    g.remoteWake(fireAt);
    return;
  }
  if (!s || s.stopping) return;
  if (s.wakeups.has(slot)) return;
  const t = setTimeout(() => {
    s.wakeups.delete(slot);
    void pollService(s);
  }, Math.max(0, slot - Date.now()));
  t.unref();
  s.wakeups.set(slot, t);
}

/** Polls the gateway's timers now (when it runs a poller). */
export function pollNow(g: GatewayTimers): Promise<void> {
  const s = g.service;
  return s ? pollService(s) : Promise.resolve();
}

function pollService(s: ServiceState): Promise<void> {
  if (s.stopping) return Promise.resolve();
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

/**
 * How long, after a step of the wall clock, no expired lease is taken over: every process renews its
 * own leases as it sees the step (at its next poll), and a lease stamped before a step forward looks
 * expired until then. Longer than a renewal period (LEASE_MS / 3 = 10 s), so a process that polls no
 * timers renews too.
 */
const RECOVERY_HOLD_AFTER_STEP_MS = 12_000;

/**
 * When the wall clock steps, this machine's scheduled timers are moved by the step (one pipeline update
 * conditional on the old base, so two processes move each once), so that each fires after the real delay it
 * was scheduled with (docs/decisions/0008-timers-follow-clock-steps.md). More:
 * docs/decisions/notes/timers-and-clock.md, "realignAfterStep".
 */
async function realignAfterStep(s: ServiceState): Promise<void> {
  const base = machineBase();
  const res = await TimerModel.updateMany(
    {
      state: 'scheduled',
      clock_id: MACHINE_CLOCK,
      $or: [{ clock_base: { $lt: base - STEP_TOLERANCE_MS } }, { clock_base: { $gt: base + STEP_TOLERANCE_MS } }],
    },
    [{ $set: { fire_at: { $add: ['$fire_at', { $subtract: [base, '$clock_base'] }] }, clock_base: base } }],
    { updatePipeline: true },
  );
  await renewOwnLeases();
  s.recoverAt = monotonicMs() + RECOVERY_HOLD_AFTER_STEP_MS;
  logger.warn({ clockBase: base, timersMoved: res.modifiedCount }, 'the wall clock stepped: scheduled timers moved with it');
}

async function pollOnce(s: ServiceState): Promise<void> {
  while (!s.stopping && s.running.size < s.concurrency) {
    const steps = wallClockSteps();
    if (steps !== s.stepsSeen) {
      s.stepsSeen = steps;
      await realignAfterStep(s);
      continue;
    }
    const free = s.concurrency - s.running.size;
    const now = Date.now();
    let batch = await claimBatch({ state: 'scheduled', fire_at: { $lte: now } }, CLAIM_ORDER, free);
    let clock: 'claimed' | 'read' = 'claimed';
    // Leases of processes that died mid-handler: they last 30 s, so a look every second is plenty.
    if (batch.length === 0 && monotonicMs() >= s.recoverAt) {
      s.recoverAt = monotonicMs() + RECOVERY_EVERY_MS;
      batch = await claimBatch({ state: 'running', lease_until: { $lte: now } }, RECOVERY_ORDER, free);
      clock = 'read';
    }
    // A full batch may have left due timers behind: the next slot to free up claims more at once.
    s.backlog = batch.length === free;
    for (const rec of batch) {
      const p: Promise<unknown> = runClaimed(rec, false, clock, s.registry).finally(() => {
        s.running.delete(p);
        if (s.backlog && !s.stopping) void pollService(s);
      });
      s.running.add(p);
    }
    if (!s.backlog) return;
  }
}
