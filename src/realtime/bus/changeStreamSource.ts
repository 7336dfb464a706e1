import type { mongo } from 'mongoose';
import { logger } from '../../logger';
import { EventModel, SequenceModel, type EventRecord } from '../../domain/events/eventModel';
import { statusChangeId, toStoredEvent, type StatusChange } from '../../domain/events/eventHooks';
import { PaymentModel } from '../../domain/payments/paymentModel';
import { STATUSES_ENTERED_WITHOUT_EVENT } from '../../domain/payments/paymentStates';
import { PROCESS_ID } from '../../processId';
import { isTransient, watchCollection } from './changeStream';
import { REPLAY_MARGIN, replayEventsSince } from './replay';
import type { Channels, Source } from './source';

type ChangeStreamDocument<T extends mongo.Document> = mongo.ChangeStreamDocument<T>;

interface PaymentStatusUpdate {
  documentKey?: { _id: string };
  updateDescription?: { updatedFields?: { status?: string; updated_at?: Date } };
}

/** A change stream document of `payments` (see the pipeline below) as a status change. */
function statusChangeOf(change: PaymentStatusUpdate): StatusChange | null {
  const paymentId = change.documentKey?._id;
  const fields = change.updateDescription?.updatedFields;
  if (!paymentId || !fields?.status || !fields.updated_at) return null;
  return { id: statusChangeId(paymentId, fields.status, fields.updated_at), paymentId, status: fields.status, intent: null };
}

/**
 * A stream opened on demand: `demand` opens it (or keeps it open) and resolves once it watches; `idle`
 * closes it `lingerMs` later unless it is demanded again meanwhile. `open` reports its own fatal
 * failures (resolving null); when it rejects (the database away) the demand rejects, and the next
 * demand tries again.
 */
function onDemand(open: () => Promise<{ stop(): Promise<void> } | null>, lingerMs: number) {
  let opened: Promise<{ stop(): Promise<void> } | null> | null = null;
  let closing: Promise<unknown> = Promise.resolve();
  let lingering: NodeJS.Timeout | null = null;
  let stopped = false;
  const stopLingering = () => {
    if (lingering) clearTimeout(lingering);
    lingering = null;
  };
  const close = () => {
    const o = opened;
    opened = null;
    closing = Promise.all([closing, o?.then((s) => s?.stop(), () => undefined)]);
    return closing;
  };
  return {
    demand(): Promise<void> {
      stopLingering();
      if (stopped) return Promise.resolve();
      // After a close, the new stream opens once the old one has let go.
      const attempt = (opened ??= closing.then(open));
      return attempt.then(
        () => undefined,
        (err: unknown) => {
          if (opened === attempt) opened = null;
          throw err;
        },
      );
    },
    idle(): void {
      if (!opened || lingering || stopped) return;
      lingering = setTimeout(() => {
        lingering = null;
        void close();
      }, lingerMs);
      lingering.unref();
    },
    isOpen: () => opened !== null,
    async stop(): Promise<void> {
      stopped = true;
      stopLingering();
      await close();
    },
  };
}

/** How long the stream on `payments` stays open after the last status subscriber leaves. */
export const STATUS_LINGER_MS = 30_000;

/**
 * The change streams: other processes' events (inserts into `events` by another `origin`; this
 * process's own reach its subscribers straight from the outbox, see createEventBus), and, while this
 * process has status subscribers, the payments' updates that enter a status without an event (the
 * server filters them; only the fields that identify the change travel). Those updates include this
 * process's own, already announced: dropped by id.
 */
export async function startChangeStream({ events, statuses }: Channels, onFatal: (fromSeq: number) => void, statusLingerMs: number): Promise<Source> {
  // The events counter now: a replay never reaches below it (events stored before the bus started are not its).
  const startSeq = (await SequenceModel.findById('events').lean())?.value ?? 0;
  const replayFloor = () => Math.max(startSeq, events.highestSeq() - REPLAY_MARGIN);
  let failed = false;
  const streams: Array<{ stop(): Promise<void> }> = [];
  // operationType first: the embedded engine then skips other operations before building their documents.
  const paymentsPipeline = [
    { $match: { operationType: 'update', 'updateDescription.updatedFields.status': { $in: STATUSES_ENTERED_WITHOUT_EVENT } } },
    { $project: { documentKey: 1, 'updateDescription.updatedFields.status': 1, 'updateDescription.updatedFields.updated_at': 1 } },
  ];
  const statusStream = onDemand(async () => {
    try {
      return await watchCollection<PaymentStatusUpdate>(PaymentModel, paymentsPipeline, {
        handle: (change) => {
          const sc = change && statusChangeOf(change);
          if (sc) statuses.publish(sc);
        },
        // A status without an event entered and left again during the gap is not seen: only the
        // current one matters to a feed, and any later one comes with an event.
        recover: async () => `read the current status of the ${await statuses.poll()} payments followed here`,
        onFatal: fail,
      });
    } catch (err) {
      // The database away: the subscriber's own reads fail too (503), and the next demand tries again.
      if (isTransient(err)) throw err;
      // Polling takes over, and it reads the subscribed payments' state: nothing is missed.
      logger.error({ err }, 'event bus cannot open its change stream on payments; switching to polling');
      fail();
      return null;
    }
  }, statusLingerMs);
  function fail(): void {
    if (failed) return;
    failed = true;
    for (const s of streams) void s.stop();
    void statusStream.stop();
    onFatal(replayFloor());
  }
  const eventsPipeline = [{ $match: { operationType: 'insert', 'fullDocument.origin': { $ne: PROCESS_ID } } }];
  streams.push(
    await watchCollection<ChangeStreamDocument<EventRecord>>(EventModel, eventsPipeline, {
      handle: (change) => {
        if (!change || change.operationType !== 'insert' || !change.fullDocument) return;
        events.publish(toStoredEvent(change.fullDocument));
      },
      recover: async () => {
        const floor = replayFloor();
        const { read, replayed } = await replayEventsSince(events, floor);
        return `replayed ${replayed} of the ${read} events of other processes stored after seq ${floor}; one stored in the gap with a lower seq would be missed`;
      },
      onFatal: fail,
    }),
  );
  const demand = () => (statuses.hasSubscribers() && !failed ? statusStream.demand() : Promise.resolve());
  // Subscribers from before the start (none in a gateway: the bus starts first).
  demand().catch(() => undefined);
  return {
    mode: 'change_stream',
    statusDemand: demand,
    statusIdle: () => {
      if (!statuses.hasSubscribers()) statusStream.idle();
    },
    statusStreamOpen: () => statusStream.isOpen(),
    async stop() {
      await Promise.all([...streams.map((s) => s.stop()), statusStream.stop()]);
    },
  };
}
