import { eventDataOf, type EventRecord } from './event.model';
import { iso } from '../payments/payment.serializer';

export interface EventResource {
  id: string;
  object: 'event';
  type: string;
  sequence: number;
  livemode: boolean;
  created_at: string;
  data: Record<string, unknown>;
}

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
  };
}
