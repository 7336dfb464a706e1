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

// The process's one bus, shared by its gateways like the database connection: one source a process
// (docs/decisions/0004), fanning out into one index; a gateway's subscribers are its connections', which
// its own close ends, and the bus holds none of its settings.
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
