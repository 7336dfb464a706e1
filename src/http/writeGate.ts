import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config';

/**
 * Holds API writes (every /v1 request but GET, HEAD and OPTIONS; POST /graphql) while this thread is
 * saturated, so that a write burst beyond the CPU does not queue in front of the timers and webhook
 * deliveries: then at most WRITE_CONCURRENCY run, the rest wait in arrival order before any work is
 * done for them. Reads pass; nothing is refused (docs/decisions/0001-write-admission-while-saturated.md).
 */
export interface WriteGate {
  /** Express middleware: holds a write until it may run (reads pass at once). */
  (req: Request, res: Response, next: NextFunction): void;
  /** Writes being handled, and waiting (for tests and diagnostics). */
  readonly inFlight: number;
  readonly waiting: number;
}

/**
 * Busy share of the last sample above which the thread counts as saturated. Not 0.9: by then the queue
 * had formed (bench:rail at 300/s, p99 lateness 293-579 ms with 0.9, 329-403 ms with 0.6); below 0.6 the
 * thread has time to spare, and writes waiting then are waiting on the disk or the engine, which more
 * writes in flight serve better (a journal sync carries all the writes made before it).
 */
const SATURATED = 0.6;
const SAMPLE_MS = 50;

/**
 * The gate of one gateway, built by src/server.ts and handed to REST's /v1 and POST /graphql: one gate
 * for both, at its Config's WRITE_CONCURRENCY, on this thread's saturation.
 */
export function createGatewayWriteGate(config: Pick<Config, 'writeConcurrency'>): WriteGate {
  return createWriteGate(config.writeConcurrency, threadSaturation());
}

/** Whether the thread is saturated now, and a way to hear when that changes. */
export interface Saturation {
  saturated(): boolean;
  /** Called on every change; returns the unsubscribe. */
  onChange(listener: () => void): () => unknown;
}

// eslint-disable-next-line no-restricted-syntax -- keyed by the response: each entry is one request's place in its own gateway's gate
const leaving = new WeakMap<Response, () => void>();

/**
 * Gives up the place of a write whose response goes on for long: a GraphQL subscription streamed over
 * POST /graphql would otherwise hold one of the saturated cap's places for its whole life, and enough
 * open streams would hold every write back for good. Safe to call for a request that never held one.
 */
export function leaveWriteGate(res: Response): void {
  leaving.get(res)?.();
}

export function createWriteGate(limitWhenSaturated: number, saturation: Saturation): WriteGate {
  let inFlight = 0;
  // First in, first out; entries of clients that left are set to null.
  let queue: Array<(() => void) | null> = [];
  let head = 0;
  let waiting = 0;
  let unsubscribe: (() => void) | null = null;

  const mayRun = () => inFlight < limitWhenSaturated || !saturation.saturated();

  const runWaiting = () => {
    while (waiting > 0 && mayRun()) {
      const next = queue[head];
      queue[head++] = null;
      if (!next) continue;
      waiting--;
      inFlight++;
      next();
    }
    if (waiting === 0) {
      // Nothing waits: drop the consumed prefix, and stop listening until something waits again.
      queue = [];
      head = 0;
      unsubscribe?.();
      unsubscribe = null;
    }
  };

  const middleware = (req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      inFlight--;
      if (waiting > 0) runWaiting();
    };
    const run = () => {
      // 'close' comes after 'finish', and alone when the connection ends first: one release either way.
      // A client that leaves mid-request frees its place while its handler may still be finishing: the
      // cap bounds what is let in, not what is left running.
      res.once('finish', release);
      res.once('close', release);
      leaving.set(res, release);
      next();
    };
    // Behind others already waiting, a new write waits too (arrival order), saturated or not.
    if (waiting === 0 && mayRun()) {
      inFlight++;
      run();
      return;
    }
    const index = queue.length;
    queue.push(run);
    waiting++;
    unsubscribe ??= saturation.onChange(runWaiting);
    res.once('close', () => {
      // The client left before its turn: its place is given up. (Once its turn came, the entry was
      // cleared and this finds another entry, or none.)
      if (queue[index] === run) {
        queue[index] = null;
        waiting--;
        if (waiting === 0) runWaiting();
      }
    });
  };
  return Object.defineProperties(middleware, {
    inFlight: { get: () => inFlight },
    waiting: { get: () => waiting },
  }) as WriteGate;
}

/**
 * This thread's saturation: its event loop utilization over the last SAMPLE_MS, sampled from when the
 * first gate is made (an unref'd interval, twenty cheap calls a second). Under load the interval fires
 * late, and the sample then spans the whole busy stretch.
 */
// eslint-disable-next-line no-restricted-syntax -- the event loop's utilization is the thread's, whichever gateway's gate reads it
let sampler: Saturation | null = null;

function threadSaturation(): Saturation {
  if (sampler) return sampler;
  let saturated = false;
  let last = performance.eventLoopUtilization();
  const listeners = new Set<() => void>();
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    const was = saturated;
    saturated = performance.eventLoopUtilization(now, last).utilization > SATURATED;
    last = now;
    if (saturated !== was) for (const l of [...listeners]) l();
  }, SAMPLE_MS).unref();
  sampler = {
    saturated: () => saturated,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return sampler;
}
