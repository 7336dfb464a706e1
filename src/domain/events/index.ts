/** Public surface of the events module. */
export { type EventHooks, type StoredEvent, type EventHook } from './eventHooks';
export { emitAccountEvent, buildEvents, buildTimers, dispatchOutbox, type EventSpec, type TimerSpec } from './outbox';
export { listEvents, listEventsForPayment, getEvent, type ListEventsOptions } from './eventService';
export { toEventResource, type EventResource } from './eventSerializer';
