/**
 * List answers (`{ object: "list", data, has_more }`). A paged list asks its service for one item more
 * than it answers: that item's presence is `has_more`, without a count of what follows.
 */
export interface ListAnswer<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** What to ask the service for to answer at most `limit` items and `has_more`. */
export const withOneMore = (limit: number): number => limit + 1;

/** At most `limit` of `fetched` (asked for with withOneMore). */
export function pageOf<T>(fetched: T[], limit: number): ListAnswer<T> {
  return { object: 'list', data: fetched.slice(0, limit), has_more: fetched.length > limit };
}

/** A list that holds every item there is. */
export function allOf<T>(data: T[]): ListAnswer<T> {
  return { object: 'list', data, has_more: false };
}
