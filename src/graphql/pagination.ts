import type { ConnectionModel } from './models';

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
