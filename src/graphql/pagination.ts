import { ApiError } from '../errors';
import type { ConnectionModel } from './models';

/**
 * A page of a list the request already holds whole, in its own order (a payment's refunds, events or
 * deliveries, read at once by the request's loaders): the `first` items after the one whose id is
 * `after`. An `after` that is not in the list is refused, as REST refuses an unknown `starting_after`.
 */
export function listConnection<T extends { id: string }>(all: readonly T[], first: number, after: string | null | undefined, what: string): ConnectionModel<T> {
  let start = 0;
  if (after) {
    const at = all.findIndex((item) => item.id === after);
    if (at < 0) throw ApiError.invalid(`Invalid argument 'after': no ${what} '${after}' in this list`);
    start = at + 1;
  }
  return {
    items: all.slice(start, start + first),
    hasNextPage: start + first < all.length,
    hasPreviousPage: start > 0,
    cursorOf: (item) => item.id,
  };
}

/**
 * A Relay connection over a newest-first list cut by `first` and `after`. The service is asked for
 * `first + 1` items (`startingAfter` = `after`): the extra one only tells whether there is a next page.
 * Cursors are the items' ids, the same cursor the REST lists take as `starting_after`.
 */
export function toConnection<T extends { id: string }>(fetched: T[], first: number, after: string | null | undefined): ConnectionModel<T> {
  return {
    items: fetched.slice(0, first),
    hasNextPage: fetched.length > first,
    hasPreviousPage: Boolean(after),
    cursorOf: (item) => item.id,
  };
}

/**
 * A connection over a REST list operation, whose answer says nothing of what follows: `page(limit,
 * startingAfter)` reads one page of REST's. One item more than `first` tells whether there is a next
 * page; where `first` is already REST's maximum `limit`, a second, one-item read after the page's last
 * item does (only when the page is full).
 */
export async function restConnection<T extends { id: string }>(
  page: (limit: number, startingAfter: string | null | undefined) => Promise<T[]>,
  first: number,
  after: string | null | undefined,
  maxLimit: number,
): Promise<ConnectionModel<T>> {
  if (first < maxLimit) return toConnection(await page(first + 1, after), first, after);
  const items = await page(first, after);
  const last = items[items.length - 1];
  const next = items.length === first && last !== undefined ? await page(1, last.id) : [];
  return toConnection([...items, ...next], first, after);
}

export function connectionFields<T>() {
  return {
    edges: (c: ConnectionModel<T>) => c.items.map((node) => ({ cursor: c.cursorOf(node), node })),
    nodes: (c: ConnectionModel<T>) => c.items,
    pageInfo: (c: ConnectionModel<T>) => {
      const first = c.items[0];
      const last = c.items[c.items.length - 1];
      return {
        hasNextPage: c.hasNextPage,
        hasPreviousPage: c.hasPreviousPage,
        startCursor: first === undefined ? null : c.cursorOf(first),
        endCursor: last === undefined ? null : c.cursorOf(last),
      };
    },
  };
}
