/** Public surface of the events module. */
export { onEventStored, onEventStoring, hooksIdle, type StoredEvent, type EventHook } from './eventHooks';
export { emitAccountEvent, buildEvents, buildTimers, dispatchOutbox, registerOutbox, sweepOutboxes, startOutboxSweeper, stopOutboxSweeper, type EventSpec, type TimerSpec } from './outbox';
export { listEvents, listEventsForPayment, getEvent, type ListEventsOptions } from './eventService';
export { toEventResource, type EventResource } from './eventSerializer';
