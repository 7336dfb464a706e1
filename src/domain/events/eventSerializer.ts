import { eventDataOf, type EventRecord } from './eventModel';
import { iso } from '../payments/paymentSerializer';
import type { components } from '../../../generated/openapi';

/** The Event as the contract declares it (openapi.yaml): the one view of an event, REST, GraphQL and pull endpoints alike. */
export type EventResource = components['schemas']['Event'];

/**
 * The Event fields of the specification, and `sequence` (contract decisions, "Webhook lab"). `data` was
 * serialized when the event was built.
 */
export function toEventResource(
  e: Pick<EventRecord, '_id' | 'type' | 'created_at' | 'data' | 'data_json'> & { livemode?: boolean; sequence?: number },
): EventResource {
  return {
    id: e._id,
    object: 'event',
    type: e.type,
    sequence: e.sequence ?? 1,
    livemode: e.livemode ?? false,
    created_at: iso(e.created_at),
    data: eventDataOf(e),
    // Stored from this very shape (the event's type and its object when it was built): read back as such.
  } as EventResource;
}
