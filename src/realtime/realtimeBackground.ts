import type { BackgroundService } from '../platform/lifecycle';
import { startEventBus, stopEventBus } from './eventBus';
import type { EventHooks } from '../domain/events/eventHooks';
import type { Realtime } from './createRealtime';

/**
 * The event bus (one change stream or poller per process) and the SSE streams that hang off it; `hooks`:
 * the gateway's, whose own events and status changes the bus hears at once; `realtime`: the gateway's
 * connections and streams (createRealtime), which its stop ends.
 */
export function realtimeService(hooks: EventHooks, realtime: Realtime): BackgroundService {
  return {
    name: 'realtime',
    async start() {
      await startEventBus({ hooks });
    },
    beforeClose() {
      // Long-lived streams would otherwise hold the HTTP server open for the whole grace period.
      realtime.sse.closeAll();
    },
    async stop() {
      realtime.connections.stopRevocationChecks();
      realtime.clientTokens.stop();
      await stopEventBus({ hooks });
    },
  };
}
