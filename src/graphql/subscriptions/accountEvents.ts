import { toEventResource, type EventResource } from '../../domain/events/eventSerializer';
import { subscribe } from '../../realtime/eventBus';
import type { GraphQLContext } from '../context';
import { AsyncQueue } from './asyncQueue';

/** `events(types)`: every event of the caller's account as it is stored, from any gateway process. */
export function accountEvents(ctx: GraphQLContext, types: readonly string[] | null): AsyncIterableIterator<EventResource> {
  let unsubscribe: () => void = () => undefined;
  const queue = new AsyncQueue<EventResource>(() => unsubscribe());
  unsubscribe = subscribe({ accountId: ctx.actor.accountId, types: types ?? undefined }, (e) =>
    queue.push(toEventResource({ _id: e.id, type: e.type, sequence: e.sequence, created_at: e.createdAt, data: e.data, livemode: e.livemode })),
  );
  return queue;
}
