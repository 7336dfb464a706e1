/** Public surface of the events module. */
export { onEventStored, onEventStoring, hooksIdle, type StoredEvent, type EventHook } from './event.hooks';
export { emitAccountEvent, buildEvents, buildTimers, dispatchOutbox, registerOutbox, sweepOutboxes, startOutboxSweeper, stopOutboxSweeper, type EventSpec, type TimerSpec } from './outbox';
export { listEvents, listEventsForPayment, getEvent, type ListEventsOptions } from './event.service';
export { toEventResource, type EventResource } from './event.serializer';
