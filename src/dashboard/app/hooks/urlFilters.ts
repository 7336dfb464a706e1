import { useMemo } from 'react';
import { navigate, useLocation } from '../router';

/**
 * A list's filters and page in the URL, so that a reload, a shared link or Back shows the same list:
 * `keys` are the filter parameters (each '' when absent), `after` the cursor of the page shown and
 * `back` the cursors of the pages before it (so "Previous" works from a reloaded URL too).
 */
export interface ListPage<K extends string> {
  filters: Record<K, string>;
  after: string;
  back: string[];
}

export function listPageFromQuery<K extends string>(keys: readonly K[], query: URLSearchParams): ListPage<K> {
  const filters = Object.fromEntries(keys.map((k) => [k, query.get(k)?.trim() ?? ''])) as Record<K, string>;
  const back = query.get('back');
  return { filters, after: query.get('after') ?? '', back: back ? back.split(',') : [] };
}

/** The URL search string of a page ('' with nothing set), parameters in a fixed order. */
export function listPageToQuery<K extends string>(keys: readonly K[], { filters, after, back }: ListPage<K>): string {
  const q = new URLSearchParams();
  for (const k of keys) if (filters[k]) q.set(k, filters[k]);
  if (after) q.set('after', after);
  if (back.length) q.set('back', back.join(','));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * The list page of the view at `path` as the URL says, and what moves it: `setFilters` starts again at
 * the first page (replacing the history entry, as typing in a filter should not fill Back), `next` and
 * `previous` walk the pages.
 */
export function useListPage<K extends string>(path: string, keys: readonly K[]) {
  const { query } = useLocation();
  const search = query.toString();
  // keys is a constant of the calling view: the URL alone decides the page.
  const page = useMemo(() => listPageFromQuery(keys, new URLSearchParams(search)), [search]);
  const go = (p: ListPage<K>, replace = false) => navigate(`${path}${listPageToQuery(keys, p)}`, { replace });
  return {
    page,
    filtered: Object.values<string>(page.filters).some(Boolean),
    setFilters: (patch: Partial<Record<K, string>>) => go({ filters: { ...page.filters, ...patch }, after: '', back: [] }, true),
    next: (endCursor: string) => go({ filters: page.filters, after: endCursor, back: page.after ? [...page.back, page.after] : page.back }),
    previous: () => go({ filters: page.filters, after: page.back.at(-1) ?? '', back: page.back.slice(0, -1) }),
  };
}
