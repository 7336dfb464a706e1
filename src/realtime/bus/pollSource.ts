import { logger } from '../../logger';
import { EventModel, SequenceModel } from '../../domain/events/eventModel';
import { toStoredEvent } from '../../domain/events/eventHooks';
import { ensureSeqIndex } from './replay';
import type { Channels, Source } from './source';

/**
 * Polling by `seq`. Sequence numbers are allocated before the write that stores an event, so a
 * lower number can become visible after a higher one. The poller keeps a frontier (every seq at or
 * below it has been handled) and the ids seen above it; a hole in the sequence is waited for up to
 * GAP_WAIT_MS (a number that was allocated but never stored is then skipped).
 */
const GAP_WAIT_MS = 5_000;

/** The source on a standalone mongod (no change streams), and after the change streams failed for good. */
export async function startPolling({ events, statuses }: Channels, pollMs: number, startAfterSeq?: number): Promise<Source> {
  // The poll's query needs an index on seq.
  await ensureSeqIndex();
  let frontier = startAfterSeq ?? (await SequenceModel.findById('events').lean())?.value ?? 0;
  const seenAbove = new Set<number>();
  const gapSince = new Map<number, number>();
  let closed = false;
  let running: Promise<void> | null = null;

  const pollOnce = async () => {
    if (statuses.hasSubscribers()) await statuses.poll();
    const docs = await EventModel.find({ seq: { $gt: frontier } }).sort({ seq: 1 }).limit(2_000).lean();
    for (const doc of docs) {
      if (seenAbove.has(doc.seq)) continue;
      seenAbove.add(doc.seq);
      events.publish(toStoredEvent(doc));
    }
    // Advance the frontier over contiguous seen numbers, and over holes that waited long enough
    // (an in-process wait: on the monotonic clock).
    const now = performance.now();
    for (;;) {
      const next = frontier + 1;
      if (seenAbove.delete(next)) {
        gapSince.delete(next);
        frontier = next;
        continue;
      }
      if (seenAbove.size === 0) break;
      const since = gapSince.get(next);
      if (since === undefined) {
        gapSince.set(next, now);
        break;
      }
      if (now - since < GAP_WAIT_MS) break;
      gapSince.delete(next);
      frontier = next;
    }
  };

  // While the database is away every poll fails: said once when it starts failing and once when it works again.
  let failingSince = 0;
  const timer = setInterval(() => {
    if (running || closed) return;
    running = pollOnce()
      .then(
        () => {
          if (failingSince) logger.warn({ afterMs: Date.now() - failingSince }, 'event bus polling again');
          failingSince = 0;
        },
        (err: unknown) => {
          if (!failingSince) logger.warn({ err }, 'event bus poll failed; retrying every poll');
          failingSince ||= Date.now();
        },
      )
      .finally(() => {
        running = null;
      });
  }, pollMs);
  timer.unref();
  return {
    mode: 'poll',
    async stop() {
      closed = true;
      clearInterval(timer);
      if (running) await running;
    },
  };
}
