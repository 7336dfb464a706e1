import { logger } from '../../logger';
import type { EventHooks } from '../../domain/events/eventHooks';
import { isChangeStreamUnsupported } from './changeStream';
import { STATUS_LINGER_MS, startChangeStream } from './changeStreamSource';
import { createEventChannel } from './eventChannel';
import { startPolling } from './pollSource';
import type { BusMode, Channels, Source } from './source';
import { createStatusChannel } from './statusChannel';

export interface EventBusOptions {
  /** Default: change stream when supported, else polling. */
  mode?: 'auto' | BusMode;
  pollMs?: number;
  /** How long the stream on `payments` stays open after the last status subscriber leaves (STATUS_LINGER_MS). */
  statusLingerMs?: number;
}

export type EventBus = ReturnType<typeof createEventBus>;

/**
 * An event bus: its event and status channels, the one source that feeds them other processes' events
 * (a change stream, or polling where there is none), and the feeds of the gateways it hears at once.
 * The source starts with the first gateway's `start` and stops with the last one's `stop`.
 */
export function createEventBus() {
  let source: Source | null = null;
  const events = createEventChannel();
  const statuses = createStatusChannel(() => source);
  const channels: Channels = { events, statuses };
  /** The gateways whose own events and status changes the bus hears at once, each with what stops hearing it. */
  const feeds = new Map<EventHooks, () => void>();

  return {
    subscribe: events.subscribe,
    /** Hands one stored event to its subscribers (also the entry point for tests); false when it had been published already. */
    publish: events.publish,
    subscribeStatusChanges: statuses.subscribe,
    statusChangesReady: statuses.ready,
    publishStatusChange: statuses.publish,

    stats(): { mode: BusMode | null; subscribers: number; published: number; statusStreamOpen: boolean } {
      return { mode: source?.mode ?? null, ...events.stats(), statusStreamOpen: source?.statusStreamOpen?.() ?? false };
    },

    /** `hooks`: the starting gateway's, whose own events the bus hands its subscribers at once. */
    async start(opts: EventBusOptions & { hooks: EventHooks }): Promise<BusMode> {
      const { hooks } = opts;
      if (!feeds.has(hooks)) {
        const stopEvents = hooks.onEventInsertedHere(events.publish);
        const stopStatusChanges = hooks.onStatusChangedHere(statuses.publish);
        feeds.set(hooks, () => {
          stopEvents();
          stopStatusChanges();
        });
      }
      if (source) return source.mode;
      const mode = opts.mode ?? 'auto';
      const pollMs = opts.pollMs ?? 100;
      if (mode !== 'poll') {
        try {
          source = await startChangeStream(
            channels,
            (fromSeq) => {
              void startPolling(channels, pollMs, fromSeq).then((s) => {
                source = s;
              });
            },
            opts.statusLingerMs ?? STATUS_LINGER_MS,
          );
          logger.info('event bus: MongoDB change stream on events');
          return source.mode;
        } catch (err) {
          if (mode === 'change_stream' || !isChangeStreamUnsupported(err)) throw err;
          logger.info('event bus: change streams not supported by this MongoDB (standalone?); polling events by seq');
        }
      }
      source = await startPolling(channels, pollMs);
      return source.mode;
    },

    /**
     * `hooks`: the stopping gateway's feed ends, and the source too once no gateway's is left. Without it
     * (tests that restart the bus in another mode) every feed and the source stop.
     */
    async stop(opts: { hooks?: EventHooks } = {}): Promise<void> {
      if (opts.hooks) {
        feeds.get(opts.hooks)?.();
        feeds.delete(opts.hooks);
        if (feeds.size > 0) return;
      }
      for (const stop of feeds.values()) stop();
      feeds.clear();
      const s = source;
      source = null;
      if (s) await s.stop();
    },
  };
}
