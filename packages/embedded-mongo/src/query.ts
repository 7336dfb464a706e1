/**
 * Query planning and execution over one collection. Lookups are planned here, against our own
 * index structures; mingo is only asked whether a candidate document matches the filter.
 *
 * Plan choice: _id equality is answered by direct map lookups; otherwise every index that applies
 * (equality prefix, `$in`, prefix + range, an order that serves the sort, a range on its first field;
 * partial indexes when the query implies their filter) is a candidate, and a bounded trial picks the
 * one that finishes first (see execute). A collection scan only when no index applies.
 */
import { mingoQuery, type Matcher } from './mingoQuery';
import type { Collection } from './collection';
import type { Bound, Index } from './indexes';
import { canonicalKey, compareValues, deepEqual, getPathValues, isOperatorObject, isPlainObject, type Doc } from './values';

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
  const q = mingoQuery(filter);
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
  let mingo: Matcher | undefined;
  return (doc) => {
    for (const k of keys) {
      const dv = Object.hasOwn(doc, k) ? doc[k] : undefined;
      const t = typeof dv;
      if (t === 'string' || t === 'boolean' || t === 'number') {
        if (dv !== filter[k]) return false;
      } else if (dv === undefined || dv === null) {
        return false;
      } else {
        mingo ??= mingoQuery(filter);
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

/** Index keys and documents one execution looked at (explain's totalKeysExamined / totalDocsExamined). */
export interface ExecStats {
  keys: number;
  docs: number;
}

/** One way to find the candidate documents of a query: what the planner chooses among. */
export interface Candidate {
  /** Documents come out already in the requested sort order. */
  ordered: boolean;
  /** The index lookup alone decides matches; the filter need not be re-checked. */
  exact: boolean;
  /** Short name (tests, logs): 'IDHACK', 'IXSCAN email_1 (sorted)', 'COLLSCAN'. */
  description: string;
  /** The access stage in explain's shape (IDHACK, FETCH over IXSCAN, COLLSCAN). */
  stage: Doc;
  docs(stats: ExecStats): Iterable<Doc>;
}

/** Trial budget, in keys + documents examined per candidate, before the planner stops comparing. */
const TRIAL_WORKS = 10_000;
const MAX_COMBOS = 1000;

function* fetchIds(coll: Collection, ids: Iterable<string>, stats: ExecStats): Generator<Doc> {
  for (const id of ids) {
    stats.keys++;
    const d = coll.get(id);
    if (d) {
      stats.docs++;
      yield d;
    }
  }
}

function* fetchEntries(coll: Collection, entries: Iterable<{ id: string }>, dedupe: boolean, stats: ExecStats): Generator<Doc> {
  const seen = dedupe ? new Set<string>() : undefined;
  for (const e of entries) {
    stats.keys++;
    if (seen) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
    }
    const d = coll.get(e.id);
    if (d) {
      stats.docs++;
      yield d;
    }
  }
}

/**
 * Documents under each equality prefix in turn, lazily: a candidate the trial abandons after a few
 * steps must not have walked its whole prefix first. Several prefixes (`$in`) can only share a
 * document through an array field, so ids are de-duplicated only then.
 */
function* fetchPrefixes(coll: Collection, idx: Index, prefixes: unknown[][], complete: boolean, stats: ExecStats): Generator<Doc> {
  const seen = prefixes.length > 1 && idx.multikey ? new Set<string>() : undefined;
  for (const p of prefixes) {
    for (const id of complete ? idx.idsWithKey(p) : idx.idsWithPrefix(p)) {
      stats.keys++;
      if (seen) {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      const d = coll.get(id);
      if (d) {
        stats.docs++;
        yield d;
      }
    }
  }
}

function* scanAll(coll: Collection, stats: ExecStats): Generator<Doc> {
  for (const d of coll.values()) {
    stats.docs++;
    yield d;
  }
}

/** Direction with which `idx` (after `skipFields` equality fields) serves `sort`, or 0. */
function sortDirection(idx: Index, sort: SortSpec, skipFields: number): 1 | -1 | 0 {
  if (idx.sparse || idx.fields.length - skipFields < sort.length) return 0;
  let dir: 1 | -1 | 0 = 0;
  for (let i = 0; i < sort.length; i++) {
    const [field, d] = sort[i]!;
    if (idx.fields[skipFields + i] !== field) return 0;
    const rel = (d * idx.dirs[skipFields + i]!) as 1 | -1;
    if (dir === 0) dir = rel;
    else if (dir !== rel) return 0;
  }
  // Last: reading multikey builds a deferred index (Index.pending), which only one that fits should pay.
  return idx.multikey ? 0 : dir;
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

/**
 * MongoDB's rule for partial indexes: usable only when the query implies the index's filter. Here:
 * every condition of the expression appears in the query as the same value or operator object, or the
 * expression asks `{$exists: true}` of a field the query sets equal to a non-null value, or
 * `{$type: 'string'}` of one it sets equal to a string.
 */
function impliesPartial(filter: Doc | undefined, expr: Doc): boolean {
  if (!filter) return false;
  for (const [field, want] of Object.entries(expr)) {
    if (field.startsWith('$')) return false;
    const have = filter[field];
    if (have === undefined) return false;
    if (deepEqual(have, want)) continue;
    const eq = isOperatorObject(have) ? (have as Doc).$eq : have;
    if (isPlainObject(want) && deepEqual(want, { $exists: true })) {
      if (eq !== undefined && eq !== null && !isOperatorObject(eq)) continue;
    }
    if (isPlainObject(want) && deepEqual(want, { $type: 'string' }) && typeof eq === 'string') continue;
    return false;
  }
  return true;
}

function ixStage(idx: Index, dir: 1 | -1, bounds: Doc): Doc {
  return {
    stage: 'FETCH',
    inputStage: {
      stage: 'IXSCAN',
      keyPattern: { ...idx.spec.key },
      indexName: idx.name,
      isMultiKey: idx.multikey,
      isUnique: idx.unique,
      isSparse: idx.sparse,
      isPartial: idx.partial !== undefined,
      direction: dir === 1 ? 'forward' : 'backward',
      indexBounds: bounds,
    },
  };
}

function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  return String(v);
}

/** indexBounds in explain's notation: `{field: ['["a", "a"]', '[MinKey, MaxKey]']}`. */
function boundsOf(idx: Index, eq: unknown[][], range?: { lo?: Bound; hi?: Bound }): Doc {
  const out: Doc = {};
  idx.fields.forEach((f, i) => {
    if (i < eq.length) out[f] = eq[i]!.map((v) => `[${showValue(v)}, ${showValue(v)}]`);
    else if (i === eq.length && range) {
      const lo = range.lo ? `${range.lo.inclusive ? '[' : '('}${showValue(range.lo.value)}` : '[MinKey';
      const hi = range.hi ? `${showValue(range.hi.value)}${range.hi.inclusive ? ']' : ')'}` : 'MaxKey]';
      out[f] = [`${lo}, ${hi}`];
    } else out[f] = ['[MinKey, MaxKey]'];
  });
  return out;
}

/** Every reasonable way to answer the query; COLLSCAN only when no index applies. */
export function candidates(coll: Collection, filter: Doc | undefined, sort: SortSpec | undefined): Candidate[] {
  const cond: Conditions = { eq: new Map(), ranges: new Map() };
  if (filter) extractConditions(filter, cond);
  const filterKeys = filter ? Object.keys(filter) : [];

  const idVals = cond.eq.get('_id');
  if (idVals) {
    const keys = idVals.length === 1 ? [canonicalKey(idVals[0])] : [...new Set(idVals.map(canonicalKey))];
    const exact = filterKeys.length === 1 && filterKeys[0] === '_id' && isPureEq(filter!._id);
    return [{
      ordered: !sort || keys.length <= 1,
      exact,
      description: 'IDHACK',
      stage: { stage: 'IDHACK' },
      docs: (stats) => fetchIds(coll, keys, stats),
    }];
  }

  const out: Candidate[] = [];
  const usable = (idx: Index) => !idx.partial || impliesPartial(filter, idx.spec.partialFilterExpression as Doc);
  for (const idx of coll.indexes.values()) {
    if (!usable(idx)) continue;
    let n = 0;
    let count = 1;
    for (const f of idx.fields) {
      const vals = cond.eq.get(f);
      if (!vals || (idx.sparse && vals.some((v) => v === null))) break;
      n++;
      count *= vals.length;
    }
    if (n === 0 || count > MAX_COMBOS) continue;
    const eqLists = idx.fields.slice(0, n).map((f) => cond.eq.get(f)!);
    const prefixes = combos(eqLists);
    const exact =
      filterKeys.length === 1 && filterKeys[0] === idx.fields[0] && idx.fields.length === 1 && isPureEq(filter![filterKeys[0]!]);
    // Equality prefix then a range on the next field (`{state: 'scheduled', fire_at: {$lte: now}}`):
    // scan just that slice, however many documents share the prefix.
    const next = idx.fields[n];
    const range = next !== undefined && prefixes.length === 1 ? cond.ranges.get(next) : undefined;
    if (range) {
      const dir = sort ? sortDirection(idx, sort, n) : 0;
      out.push({
        ordered: !sort || dir === 1,
        exact: false,
        description: `IXSCAN ${idx.name} (prefix+range)`,
        stage: ixStage(idx, 1, boundsOf(idx, eqLists, range)),
        docs: (stats) => fetchEntries(coll, idx.scanRange(range.lo, range.hi, prefixes[0]!), idx.multikey, stats),
      });
      continue;
    }
    const dir = sort && prefixes.length === 1 ? sortDirection(idx, sort, n) : 0;
    if (dir !== 0) {
      out.push({
        ordered: true,
        exact,
        description: `IXSCAN ${idx.name} (sorted)`,
        stage: ixStage(idx, dir, boundsOf(idx, eqLists)),
        docs: (stats) => fetchEntries(coll, idx.scanPrefix(prefixes[0]!, dir === -1), false, stats),
      });
      continue;
    }
    const complete = n === idx.fields.length && !idx.isId;
    out.push({
      ordered: !sort,
      exact,
      description: `IXSCAN ${idx.name}`,
      stage: ixStage(idx, 1, boundsOf(idx, eqLists)),
      docs: (stats) =>
        complete && prefixes.length === 1
          ? fetchIds(coll, idx.idsWithKey(prefixes[0]!), stats)
          : fetchPrefixes(coll, idx, prefixes, complete, stats),
    });
  }

  if (sort) {
    for (const idx of coll.indexes.values()) {
      if (!usable(idx)) continue;
      const dir = sortDirection(idx, sort, 0);
      if (dir === 0) continue;
      out.push({
        ordered: true,
        exact: false,
        description: `IXSCAN ${idx.name} (sort)`,
        stage: ixStage(idx, dir, boundsOf(idx, [])),
        docs: (stats) => fetchEntries(coll, idx.scanPrefix([], dir === -1), false, stats),
      });
      break;
    }
  }

  for (const idx of coll.indexes.values()) {
    // A sparse index serves ranges too: a range here has a non-null bound, which (type bracketing)
    // never matches a missing or null field, i.e. never a document the sparse index left out.
    if (!usable(idx)) continue;
    const r = cond.ranges.get(idx.fields[0]!);
    if (!r || cond.eq.has(idx.fields[0]!)) continue;
    out.push({
      ordered: !sort || sortDirection(idx, sort, 0) === 1,
      exact: false,
      description: `IXSCAN ${idx.name} (range)`,
      stage: ixStage(idx, 1, boundsOf(idx, [], r)),
      docs: (stats) => fetchEntries(coll, idx.scanRange(r.lo, r.hi), idx.multikey, stats),
    });
  }

  if (out.length === 0) {
    out.push({ ordered: !sort, exact: false, description: 'COLLSCAN', stage: { stage: 'COLLSCAN', direction: 'forward' }, docs: (stats) => scanAll(coll, stats) });
  }
  return out;
}

/** One candidate being run: its output so far and what it examined. */
interface Run {
  cand: Candidate;
  iter: Iterator<Doc>;
  out: Doc[];
  stats: ExecStats;
  finished: boolean;
}

/** Advances a run by one document; true once it has all it needs (EOF, or enough in sort order). */
function step(r: Run, match: ((d: Doc) => boolean) | undefined, need: number, sorted: boolean): boolean {
  const next = r.iter.next();
  if (next.done) return (r.finished = true);
  if (match && !match(next.value)) return false;
  r.out.push(next.value);
  // An unordered plan must see every match before a sort can answer; an ordered one stops at `need`.
  if ((!sorted || r.cand.ordered) && r.out.length >= need) r.finished = true;
  return r.finished;
}

function start(cand: Candidate): Run {
  const stats = { keys: 0, docs: 0 };
  return { cand, iter: cand.docs(stats)[Symbol.iterator](), out: [], stats, finished: false };
}

export interface Execution {
  docs: Doc[];
  winner: Candidate;
  rejected: Candidate[];
  stats: ExecStats;
  /** Keys and documents examined by every candidate, the trial's losers included. */
  examined: number;
}

/**
 * Runs a query the way MongoDB's multi-planner does: with one candidate plan, just runs it; with
 * several, advances them in turns, one document each, and the first to finish (all its matches, or
 * `skip + limit` of them already in sort order) wins, with its results. So the planning cost is at most
 * the number of candidates times the winner's own work, whatever the collection holds. If none finishes
 * within TRIAL_WORKS, the one that examined the least per result so far runs to the end.
 */
export function execute(coll: Collection, opts: QueryOptions): Execution {
  const cands = candidates(coll, opts.filter, opts.sort);
  const skip = Math.max(0, opts.skip ?? 0);
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
  const need = skip + limit;
  const sorted = opts.sort !== undefined;
  const matcherFor = (c: Candidate) => (c.exact ? undefined : (match ??= compileFilter(opts.filter)));
  let match: ((d: Doc) => boolean) | undefined;

  let winner: Run | undefined;
  let runs: Run[] = [];
  if (cands.length === 1) {
    winner = start(cands[0]!);
    const m = matcherFor(winner.cand);
    while (!step(winner, m, need, sorted));
  } else {
    runs = cands.map(start);
    let works = 0;
    trial: while (works < TRIAL_WORKS) {
      for (const r of runs) {
        if (step(r, matcherFor(r.cand), need, sorted)) {
          winner = r;
          break trial;
        }
      }
      works++;
    }
    if (!winner) {
      // Nobody finished: keep going with the most productive (results per examined), ordered first on ties.
      const score = (r: Run) => r.out.length / Math.max(1, r.stats.keys + r.stats.docs) + (r.cand.ordered && sorted ? 1e-9 : 0);
      winner = runs.reduce((a, b) => (score(b) > score(a) ? b : a));
      const m = matcherFor(winner.cand);
      while (!step(winner, m, need, sorted));
    }
    for (const r of runs) if (r !== winner) r.iter.return?.();
  }
  let docs = winner.out;
  if (sorted && !winner.cand.ordered) docs = sortDocs(docs, opts.sort!);
  if (skip > 0 || docs.length > limit) docs = docs.slice(skip, limit === Infinity ? undefined : skip + limit);
  const examined = runs.length ? runs.reduce((n, r) => n + r.stats.keys + r.stats.docs, 0) : winner.stats.keys + winner.stats.docs;
  return { docs, winner: winner.cand, rejected: cands.filter((c) => c !== winner!.cand), stats: winner.stats, examined };
}

/** The plan the planner would choose for this query (runs it: the choice is made by trial). */
export function plan(coll: Collection, filter: Doc | undefined, sort: SortSpec | undefined, limit?: number): Candidate {
  return execute(coll, { filter, sort, limit }).winner;
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
  return execute(coll, opts).docs;
}
