import type { BackgroundService } from '../platform/lifecycle';
import { configureClientTokenChecks, stopClientTokenChecks } from './clientTokenStreams';
import { configureConnectionLimits, stopRevocationChecks } from './connections';
import { startEventBus, stopEventBus } from './eventBus';
import { configureKeepAlive } from './paymentStream';
import type { EventHooks } from '../domain/events/eventHooks';
import { closeAllSseConnections } from './sse';

/**
 * The event bus (one change stream or poller per process) and the SSE streams that hang off it; `hooks`:
 * the gateway's, whose own events and status changes the bus hears at once.
 */
export function realtimeService(hooks: EventHooks): BackgroundService {
  return {
    name: 'realtime',
    async start({ config }) {
      configureConnectionLimits(config.connections);
      configureClientTokenChecks(config.connections.revocationCheckMs);
      configureKeepAlive(config.connections.sseKeepAliveMs);
      await startEventBus({ hooks });
    },
    beforeClose() {
      // Long-lived streams would otherwise hold the HTTP server open for the whole grace period.
      closeAllSseConnections();
    },
    async stop() {
      stopRevocationChecks();
      stopClientTokenChecks();
      await stopEventBus({ hooks });
    },
  };
}
