import { logger } from '../../logger';
import { EventModel } from '../../domain/events/eventModel';
import { toStoredEvent } from '../../domain/events/eventHooks';
import { PROCESS_ID } from '../../processId';
import type { EventChannel } from './eventChannel';

/**
 * How far below the highest `seq` published a replay starts. A seq is allocated before its event is
 * stored (from an outbox, moments later), so an event can be stored after others with higher numbers;
 * the margin covers those in flight when the database went away. Everything the replay reads again
 * within it was published already and is dropped by id (the channel remembers far more).
 */
export const REPLAY_MARGIN = 2_000;
const REPLAY_PAGE = 1_000;

/** The `events.seq` index that polling and replays read by; building it is idempotent. */
export function ensureSeqIndex(): Promise<unknown> {
  return EventModel.collection.createIndex({ seq: 1 }).catch((err: unknown) => logger.warn({ err }, 'could not create events.seq index'));
}

/**
 * The other processes' events stored with a seq above `floor`, published in seq order (each one not
 * published already reaches the subscribers): what a change stream that lost its history missed.
 */
export async function replayEventsSince(events: EventChannel, floor: number): Promise<{ read: number; replayed: number }> {
  await ensureSeqIndex();
  let after = floor;
  let read = 0;
  let replayed = 0;
  for (;;) {
    const docs = await EventModel.find({ seq: { $gt: after }, origin: { $ne: PROCESS_ID } }).sort({ seq: 1 }).limit(REPLAY_PAGE).lean();
    for (const doc of docs) if (events.publish(toStoredEvent(doc))) replayed++;
    read += docs.length;
    if (docs.length < REPLAY_PAGE) return { read, replayed };
    after = docs[docs.length - 1]!.seq;
  }
}
