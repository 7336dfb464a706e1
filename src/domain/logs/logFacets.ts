import { ApiError } from '../../errors';
import type { RequestLogRecord } from './requestLogModel';

/** The dashboard's filters of the log (GraphQL's `LogFilter`; REST's GET /logs has none). */
export interface LogFilter {
  method?: string | null;
  /** The hundreds digit: 2, 4 or 5. */
  statusClass?: 2 | 4 | 5 | null;
  pathPrefix?: string | null;
  source?: 'api' | 'dashboard' | null;
}

/** Path prefixes of whole segments an entry is tagged with: /v1, /v1/payment_intents, ... (ids past these are rarely a filter). */
const PATH_DEPTH = 4;
const METHOD = /^[A-Za-z]{1,10}$/;

/**
 * The tags of an entry that the filters match on (`m:GET`, `s:2`, `src:api`, `p:/v1/payment_intents`),
 * kept in one multikey field so that one index serves each filter in newest-first order.
 */
export function logFacets(entry: Pick<RequestLogRecord, 'method' | 'status' | 'path' | 'source'>): string[] {
  const facets = [`m:${entry.method.toUpperCase()}`, `s:${Math.floor(entry.status / 100)}`, `src:${entry.source ?? 'api'}`];
  const segments = entry.path.split('?')[0]!.split('/').filter(Boolean);
  for (let i = 1; i <= Math.min(segments.length, PATH_DEPTH); i++) facets.push(`p:/${segments.slice(0, i).join('/')}`);
  return facets;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A filter's conditions: every facet listed, and the path's rest past PATH_DEPTH as an anchored pattern. */
export interface LogFilterTerms {
  facets: string[];
  pathPattern: string | null;
}

/**
 * The conditions of a filter, checked first (errors name the fields as the dashboard labels them). The
 * facets carry the index. A path matches by whole segments: the path and what is under it
 * (`/v1/payment_intents` finds `/v1/payment_intents/pi_…`, not `/v1/payment_intents_x`). Entries written
 * before facets existed are not found by a filter.
 */
export function logFilterTerms(f: LogFilter): LogFilterTerms {
  const facets: string[] = [];
  let pathPattern: string | null = null;
  if (f.method) {
    if (!METHOD.test(f.method)) throw ApiError.invalid(`Method: '${f.method.slice(0, 20)}' is not an HTTP method (GET, POST, ...)`);
    facets.push(`m:${f.method.toUpperCase()}`);
  }
  if (f.statusClass) facets.push(`s:${f.statusClass}`);
  if (f.source) facets.push(`src:${f.source}`);
  if (f.pathPrefix) {
    if (f.pathPrefix.length > 200) throw ApiError.invalid('Path: at most 200 characters');
    const segments = f.pathPrefix.split('?')[0]!.split('/').filter(Boolean);
    if (!f.pathPrefix.startsWith('/') || segments.length === 0) throw ApiError.invalid('Path: a path starting with "/", such as /v1/payment_intents');
    facets.push(`p:/${segments.slice(0, PATH_DEPTH).join('/')}`);
    // Deeper than the facets go: the rest by an anchored expression of the escaped path.
    if (segments.length > PATH_DEPTH) pathPattern = `^${escapeRegex(`/${segments.join('/')}`)}(/|$)`;
  }
  return { facets, pathPattern };
}

/** The terms as a query on stored documents holding `facets` and `path` (null: nothing to narrow). */
export function logFilterQuery(terms: LogFilterTerms): Record<string, unknown> | null {
  const { facets, pathPattern } = terms;
  if (facets.length === 0) return null;
  const q: Record<string, unknown> = { facets: facets.length === 1 ? facets[0] : { $all: facets } };
  if (pathPattern !== null) q.path = { $regex: pathPattern };
  return q;
}

/**
 * The terms tested on one entry, and the default of listings, a key's own requests without the
 * dashboard's (`excludeDashboard`): the stored documents hold many entries each, and a listing picks
 * those that match from the documents that hold one (requestLogStore.ts).
 */
export function logEntryMatcher(terms: LogFilterTerms, excludeDashboard: boolean): (entry: RequestLogRecord) => boolean {
  const pathPattern = terms.pathPattern === null ? null : new RegExp(terms.pathPattern);
  return (entry) => {
    if (excludeDashboard && entry.source === 'dashboard') return false;
    if (terms.facets.length > 0) {
      const facets = entry.facets ?? [];
      for (const facet of terms.facets) if (!facets.includes(facet)) return false;
    }
    return pathPattern === null || pathPattern.test(entry.path);
  };
}
