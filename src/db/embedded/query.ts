/**
 * Query planning and execution over one collection. Lookups are planned here, against our own
 * index structures; mingo is only asked whether a candidate document matches the filter.
 *
 * Plan choice, in order: _id equality (direct map lookups), the index covering the longest
 * equality prefix (unique complete matches first), an index whose order serves the sort, a
 * range scan on an index's first field, and only then a collection scan.
 */
import { Query } from 'mingo';
import type { Collection } from './collection';
import type { Bound, Index } from './indexes';
import { canonicalKey, compareValues, getPathValues, isOperatorObject, isPlainObject, type Doc } from './values';

export type SortSpec = Array<[string, 1 | -1]>;

export interface QueryOptions {
  filter?: Doc;
  sort?: SortSpec;
  skip?: number;
  /** 0 or undefined: no limit. */
  limit?: number;
}

export function parseSort(sort: unknown): SortSpec | undefined {
  if (!isPlainObject(sort)) return undefined;
  const out: SortSpec = [];
  for (const [k, v] of Object.entries(sort)) {
    if (isPlainObject(v)) continue; // { $meta: ... } has no meaning without text search
    out.push([k, v === -1 || v === '-1' || v === 'desc' || v === 'descending' ? -1 : 1]);
  }
  return out.length ? out : undefined;
}

export function compileFilter(filter: Doc | undefined): ((doc: Doc) => boolean) | undefined {
  if (!filter || Object.keys(filter).length === 0) return undefined;
  const plain = plainEqualityMatcher(filter);
  if (plain) return plain;
  const q = new Query(filter);
  return (doc) => q.test(doc);
}

/**
 * The writes of a busy application mostly filter on top-level fields equal to strings, numbers or
 * booleans (`{_id, version}`, `{_id, owner, state}`); compiling a mingo query for each was ~7 % of the
 * engine's CPU. Such filters are matched here while the document's values are primitives too; any
 * other value (an array, which matches by element, a Date, a Long…) is left to mingo, as is any
 * filter with operators, dotted paths, null or objects.
 */
function plainEqualityMatcher(filter: Doc): ((doc: Doc) => boolean) | undefined {
  const keys = Object.keys(filter);
  for (const k of keys) {
    if (k.startsWith('$') || k.includes('.')) return undefined;
    const v = filter[k];
    const t = typeof v;
    if (t !== 'string' && t !== 'boolean' && !(t === 'number' && !Number.isNaN(v))) return undefined;
  }
  let mingo: Query | undefined;
  return (doc) => {
    for (const k of keys) {
      const dv = Object.hasOwn(doc, k) ? doc[k] : undefined;
      const t = typeof dv;
      if (t === 'string' || t === 'boolean' || t === 'number') {
        if (dv !== filter[k]) return false;
      } else if (dv === undefined || dv === null) {
        return false;
      } else {
        mingo ??= new Query(filter);
        return mingo.test(doc);
      }
    }
    return true;
  };
}

interface Conditions {
  eq: Map<string, unknown[]>;
  ranges: Map<string, { lo?: Bound; hi?: Bound }>;
}

function isIndexableEqValue(v: unknown): boolean {
  return !(v instanceof RegExp) && !Array.isArray(v) && !isOperatorObject(v) && typeRank12(v);
}

function typeRank12(v: unknown): boolean {
  // BSONRegExp values behave like regexes in filters.
  return !(v && typeof v === 'object' && (v as { _bsontype?: string })._bsontype === 'BSONRegExp');
}

function extractConditions(filter: Doc, out: Conditions): void {
  for (const [field, cond] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(cond)) {
      for (const sub of cond) if (isPlainObject(sub)) extractConditions(sub, out);
      continue;
    }
    if (field.startsWith('$')) continue;
    if (!isOperatorObject(cond)) {
      if (isIndexableEqValue(cond)) out.eq.set(field, [cond]);
      continue;
    }
    if ('$eq' in cond && isIndexableEqValue(cond.$eq)) out.eq.set(field, [cond.$eq]);
    else if ('$in' in cond && Array.isArray(cond.$in) && cond.$in.every(isIndexableEqValue)) {
      out.eq.set(field, cond.$in);
    }
    const r = out.ranges.get(field) ?? {};
    for (const [op, val] of Object.entries(cond)) {
      if (val === null || val === undefined || !isIndexableEqValue(val)) continue;
      if (op === '$gt' || op === '$gte') r.lo = { value: val, inclusive: op === '$gte' };
      if (op === '$lt' || op === '$lte') r.hi = { value: val, inclusive: op === '$lte' };
    }
    if (r.lo || r.hi) out.ranges.set(field, r);
  }
}

/** A bare value, { $eq: v } or { $in: [...] }: exactly what an index equality lookup answers. */
function isPureEq(v: unknown): boolean {
  if (!isOperatorObject(v)) return true;
  const keys = Object.keys(v);
  return keys.length === 1 && (keys[0] === '$eq' || keys[0] === '$in');
}

interface Plan {
  docs: Iterable<Doc>;
  /** Documents come out already in the requested sort order. */
  ordered: boolean;
  /** The index lookup alone decides matches; the filter need not be re-checked. */
  exact: boolean;
  description: string;
}

const MAX_COMBOS = 1000;

function* idsToDocs(coll: Collection, ids: Iterable<string>): Generator<Doc> {
  for (const id of ids) {
    const d = coll.get(id);
    if (d) yield d;
  }
}

function* entriesToDocs(coll: Collection, entries: Iterable<{ id: string }>, dedupe: boolean): Generator<Doc> {
  const seen = dedupe ? new Set<string>() : undefined;
  for (const e of entries) {
    if (seen) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
    }
    const d = coll.get(e.id);
    if (d) yield d;
  }
}

/** Direction with which `idx` (after `skipFields` equality fields) serves `sort`, or 0. */
function sortDirection(idx: Index, sort: SortSpec, skipFields: number): 1 | -1 | 0 {
  if (idx.multikey || idx.sparse || idx.partial) return 0;
  if (idx.fields.length - skipFields < sort.length) return 0;
  let dir: 1 | -1 | 0 = 0;
  for (let i = 0; i < sort.length; i++) {
    const [field, d] = sort[i]!;
    if (idx.fields[skipFields + i] !== field) return 0;
    const rel = (d * idx.dirs[skipFields + i]!) as 1 | -1;
    if (dir === 0) dir = rel;
    else if (dir !== rel) return 0;
  }
  return dir;
}

function combos(lists: unknown[][]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const l of lists) {
    const next: unknown[][] = [];
    for (const c of out) for (const v of l) next.push([...c, v]);
    out = next;
  }
  return out;
}

export function plan(coll: Collection, filter: Doc | undefined, sort: SortSpec | undefined): Plan {
  const cond: Conditions = { eq: new Map(), ranges: new Map() };
  if (filter) extractConditions(filter, cond);
  const filterKeys = filter ? Object.keys(filter) : [];

  const idVals = cond.eq.get('_id');
  if (idVals) {
    const keys = idVals.length === 1 ? [canonicalKey(idVals[0])] : [...new Set(idVals.map(canonicalKey))];
    let docs: Iterable<Doc>;
    if (keys.length === 1) {
      // findById: the hottest path; no generator, no set.
      const d = coll.get(keys[0]!);
      docs = d ? [d] : [];
    } else docs = idsToDocs(coll, keys);
    const exact = filterKeys.length === 1 && filterKeys[0] === '_id' && isPureEq(filter!._id);
    return { docs, ordered: !sort || keys.length <= 1, exact, description: 'IDHACK' };
  }

  // Longest equality prefix; a complete unique match beats everything else.
  let best: { idx: Index; n: number; score: number; count: number } | undefined;
  for (const idx of coll.indexes.values()) {
    if (idx.partial) continue;
    let n = 0;
    let count = 1;
    for (const f of idx.fields) {
      const vals = cond.eq.get(f);
      if (!vals || (idx.sparse && vals.some((v) => v === null))) break;
      n++;
      count *= vals.length;
    }
    if (n === 0 || count > MAX_COMBOS) continue;
    const score = (idx.unique && n === idx.fields.length ? 1000 : 0) + n;
    if (!best || score > best.score || (score === best.score && count < best.count)) {
      best = { idx, n, score, count };
    }
  }
  if (best) {
    const { idx, n } = best;
    const prefixes = combos(idx.fields.slice(0, n).map((f) => cond.eq.get(f)!));
    const exact =
      filterKeys.length === 1 &&
      filterKeys[0] === idx.fields[0] &&
      idx.fields.length === 1 &&
      isPureEq(filter![filterKeys[0]!]);
    // Equality prefix then a range on the next field (`{state: 'scheduled', fire_at: {$lte: now}}`):
    // scan just that slice, however many documents share the prefix.
    const next = idx.fields[n];
    const range = next !== undefined && prefixes.length === 1 ? cond.ranges.get(next) : undefined;
    if (range) {
      return {
        docs: entriesToDocs(coll, idx.scanRange(range.lo, range.hi, prefixes[0]!), idx.multikey),
        ordered: !sort || sortDirection(idx, sort, n) === 1,
        exact: false,
        description: `IXSCAN ${idx.name} (prefix+range)`,
      };
    }
    if (sort && prefixes.length === 1) {
      const dir = sortDirection(idx, sort, n);
      if (dir !== 0) {
        return {
          docs: entriesToDocs(coll, idx.scanPrefix(prefixes[0]!, dir === -1), false),
          ordered: true,
          exact,
          description: `IXSCAN ${idx.name} (sorted)`,
        };
      }
    }
    const complete = n === idx.fields.length && !idx.isId;
    if (complete && prefixes.length === 1) {
      return { docs: idsToDocs(coll, idx.idsWithKey(prefixes[0]!)), ordered: !sort, exact, description: `IXSCAN ${idx.name}` };
    }
    const ids = new Set<string>();
    for (const p of prefixes) for (const id of complete ? idx.idsWithKey(p) : idx.idsWithPrefix(p)) ids.add(id);
    return { docs: idsToDocs(coll, ids), ordered: !sort, exact, description: `IXSCAN ${idx.name}` };
  }

  if (sort) {
    for (const idx of coll.indexes.values()) {
      const dir = sortDirection(idx, sort, 0);
      if (dir !== 0) {
        return {
          docs: entriesToDocs(coll, idx.scanPrefix([], dir === -1), false),
          ordered: true,
          exact: false,
          description: `IXSCAN ${idx.name} (sort)`,
        };
      }
    }
  }

  for (const idx of coll.indexes.values()) {
    // A sparse index serves ranges too: a range here has a non-null bound, which (type bracketing)
    // never matches a missing or null field, i.e. never a document the sparse index left out.
    if (idx.partial) continue;
    const r = cond.ranges.get(idx.fields[0]!);
    if (!r) continue;
    const ordered = !sort || sortDirection(idx, sort, 0) === 1;
    return {
      docs: entriesToDocs(coll, idx.scanRange(r.lo, r.hi), idx.multikey),
      ordered,
      exact: false,
      description: `IXSCAN ${idx.name} (range)`,
    };
  }

  return { docs: coll.values(), ordered: !sort, exact: false, description: 'COLLSCAN' };
}

/** Sort key for one document: arrays contribute their min (ascending) or max (descending). */
function sortKey(doc: Doc, field: string, dir: 1 | -1): unknown {
  const vals = getPathValues(doc, field);
  if (vals.length === 1) return vals[0];
  let best = vals[0];
  for (let i = 1; i < vals.length; i++) {
    const c = compareValues(vals[i], best);
    if ((dir === 1 && c < 0) || (dir === -1 && c > 0)) best = vals[i];
  }
  return best;
}

export function sortDocs(docs: Doc[], sort: SortSpec): Doc[] {
  const keyed = docs.map((d, i) => ({ d, i, k: sort.map(([f, dir]) => sortKey(d, f, dir)) }));
  keyed.sort((a, b) => {
    for (let j = 0; j < sort.length; j++) {
      const c = compareValues(a.k[j], b.k[j]);
      if (c !== 0) return c * sort[j]![1];
    }
    return a.i - b.i; // stable
  });
  return keyed.map((x) => x.d);
}

/** Runs a query and returns references to matching stored documents (never copies them). */
export function runQuery(coll: Collection, opts: QueryOptions): Doc[] {
  const p = plan(coll, opts.filter, opts.sort);
  const match = p.exact ? undefined : compileFilter(opts.filter);
  const skip = Math.max(0, opts.skip ?? 0);
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  if (opts.sort && !p.ordered) {
    const all: Doc[] = [];
    for (const d of p.docs) if (!match || match(d)) all.push(d);
    const sorted = sortDocs(all, opts.sort);
    return sorted.slice(skip, limit === Infinity ? undefined : skip + limit);
  }
  const out: Doc[] = [];
  let skipped = 0;
  for (const d of p.docs) {
    if (match && !match(d)) continue;
    if (skipped < skip) {
      skipped++;
      continue;
    }
    out.push(d);
    if (out.length >= limit) break;
  }
  return out;
}

export function explainPlan(coll: Collection, filter: Doc | undefined, sort: SortSpec | undefined): string {
  return plan(coll, filter, sort).description;
}
