import { createEventBus } from './bus/createEventBus';

/**
 * The cross-instance event bus: every stored event, whichever gateway process wrote it, reaches the
 * subscribers of every process once, within a second (docs/decisions/0004-cross-instance-event-bus.md;
 * its parts in ./bus). Status subscribers await statusChangesReady() before reading the payment.
 */
export type { BusEvent, BusListener, SubscriptionFilter } from './bus/eventChannel';
export type { StatusChange, StatusChangeListener } from './bus/statusChannel';
export type { BusMode } from './bus/source';
export type { EventBusOptions } from './bus/createEventBus';

// The process's one bus. Its source is the process's on purpose (docs/decisions/0004); its channels are
// per process until createRealtime/createGraphql (issue 59): every gateway's subscribers in one index.
const bus = createEventBus();

export const {
  subscribe,
  publish,
  subscribeStatusChanges,
  statusChangesReady,
  publishStatusChange,
  stats: busStats,
  start: startEventBus,
  stop: stopEventBus,
} = bus;
