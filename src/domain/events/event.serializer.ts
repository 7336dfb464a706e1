import { eventDataOf, type EventRecord } from './event.model';
import { iso } from '../payments/payment.serializer';

export interface EventResource {
  id: string;
  object: 'event';
  type: string;
  livemode: boolean;
  created_at: string;
  data: Record<string, unknown>;
}

/** Exactly the Event fields of the specification. `data` was serialized when the event was built. */
export function toEventResource(e: Pick<EventRecord, '_id' | 'type' | 'created_at' | 'data' | 'data_json'> & { livemode?: boolean }): EventResource {
  return {
    id: e._id,
    object: 'event',
    type: e.type,
    livemode: e.livemode ?? false,
    created_at: iso(e.created_at),
    data: eventDataOf(e),
  };
}
