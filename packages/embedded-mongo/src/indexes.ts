/**
 * One secondary (or _id) index: an ordered list of (key tuple, document id) entries.
 * Equality and prefix lookups are binary searches; sort+limit walks the list in order.
 */
import { Query } from 'mingo';
import { ErrorCodes, MongoCommandError } from './errors';
import { SortedList, type Cursor } from './sortedList';
import { MEETS_ARRAY, canonicalKey, compareValues, getPathValues, singlePathValue, type Doc } from './values';

export interface IndexSpec {
  v?: number;
  key: Record<string, unknown>;
  name: string;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Doc;
  expireAfterSeconds?: number;
  [option: string]: unknown;
}

export interface IndexEntry {
  k: unknown[];
  id: string;
}

/** Cap on keys produced by one document (compound over arrays multiplies). */
const MAX_KEYS_PER_DOC = 10_000;

export class Index {
  readonly spec: IndexSpec;
  readonly name: string;
  readonly fields: string[];
  /** The fields split on dots. */
  private readonly paths: string[][];
  readonly dirs: number[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partial: Query | undefined;
  /** Set once any document stored an array under an indexed path; disables index-ordered sorts. */
  multikey = false;
  /** The entries in key order; read it through `ordered` (see `deferredFrom`). */
  private readonly list: SortedList<IndexEntry>;
  private readonly cmp: (a: IndexEntry, b: IndexEntry) => number;
  /**
   * The _id index only, until a query first needs _id order (a sort or a range on _id): the
   * collection's documents, from which `ordered` then builds the list, kept up to date from then on.
   * Look-ups by _id go to the collection's document map, so most collections never need the order,
   * and inserting random string ids into a large ordered list is a binary search through entries
   * that are rarely in the CPU cache: under the gateway's load the costliest step of an insert.
   */
  private deferredFrom: (() => Iterable<[string, Doc]>) | undefined;
  /**
   * Unique indexes only: hash of complete key tuples (canonical key string -> id or ids) for O(1)
   * unique checks and equality lookups. Not kept for _id, where the collection's document map plays
   * that role, nor for non-unique indexes: there many documents can share a key (every scheduled
   * timer under `{state, lease_until}`), and keeping a growing Set per key and a canonical string per
   * entry cost more on every write (~15 % of the engine's CPU under the gateway's load) than the
   * binary search of the ordered list costs the lookups.
   */
  private readonly eq = new Map<string, string | Set<string>>();
  private readonly hashed: boolean;

  /** `documents`: for the _id index, the collection's documents by id key (see `deferredFrom`). */
  constructor(spec: IndexSpec, documents?: () => Iterable<[string, Doc]>) {
    this.spec = spec;
    this.name = spec.name;
    this.fields = Object.keys(spec.key);
    this.paths = this.fields.map((f) => f.split('.'));
    this.dirs = this.fields.map((f) => (spec.key[f] === -1 ? -1 : 1));
    this.unique = spec.unique === true || this.name === '_id_';
    this.sparse = spec.sparse === true;
    this.partial = spec.partialFilterExpression ? new Query(spec.partialFilterExpression) : undefined;
    this.hashed = this.unique && this.name !== '_id_';
    this.cmp = entryOrder(this.dirs);
    this.list = new SortedList<IndexEntry>(this.cmp);
    this.deferredFrom = this.isId ? documents : undefined;
  }

  /** The ordered entries; a deferred _id index builds them now, from the collection's documents. */
  private get ordered(): SortedList<IndexEntry> {
    const documents = this.deferredFrom;
    if (documents) {
      this.deferredFrom = undefined;
      const entries: IndexEntry[] = [];
      for (const [id, doc] of documents()) for (const k of this.keysFor(doc)) entries.push({ k, id });
      entries.sort(this.cmp);
      for (const e of entries) this.list.insert(e); // in order, so each one is appended
    }
    return this.list;
  }

  /** The top-level fields this index reads (its keys' and its partial filter's): all keysFor needs. */
  topLevelFields(): string[] {
    const out = this.fields.map((f) => f.split('.')[0]!);
    const walk = (filter: unknown): void => {
      if (Array.isArray(filter)) filter.forEach(walk);
      else if (filter && typeof filter === 'object') {
        for (const [k, v] of Object.entries(filter)) {
          if (k.startsWith('$')) walk(v);
          else out.push(k.split('.')[0]!);
        }
      }
    };
    walk(this.spec.partialFilterExpression);
    return out;
  }

  get isId(): boolean {
    return this.name === '_id_';
  }

  /** Key tuples for a document, or [] when the document is not in this index (sparse/partial). */
  keysFor(doc: Doc): unknown[][] {
    if (this.partial && !this.partial.test(doc)) return [];
    // Most documents hold no array under an indexed path: they have exactly one key tuple, built
    // here without the per-field value arrays, the cross product and the de-duplication below.
    const tuple: unknown[] = [];
    let missing = 0;
    for (const parts of this.paths) {
      const v = singlePathValue(doc, parts);
      if (v === MEETS_ARRAY) return this.keysFanningOut(doc);
      if (v === undefined) missing++;
      tuple.push(v === undefined ? null : v);
    }
    if (this.sparse && missing === tuple.length) return [];
    return [tuple];
  }

  /** keysFor when an indexed path meets an array: one tuple per combination of values, distinct. */
  private keysFanningOut(doc: Doc): unknown[][] {
    const perField = this.fields.map((f) => getPathValues(doc, f));
    if (this.sparse && perField.every((vals) => vals.every((v) => v === undefined))) return [];
    let tuples: unknown[][] = [[]];
    for (const vals of perField) {
      if (vals.length > 1) this.multikey = true;
      const next: unknown[][] = [];
      for (const t of tuples) for (const v of vals) next.push([...t, v === undefined ? null : v]);
      tuples = next;
      if (tuples.length > MAX_KEYS_PER_DOC) {
        throw new MongoCommandError(ErrorCodes.BadValue, `too many index keys for index ${this.name}`);
      }
    }
    if (tuples.length > 1) {
      const seen = new Set<string>();
      tuples = tuples.filter((t) => {
        const c = canonicalKey(t);
        if (seen.has(c)) return false;
        seen.add(c);
        return true;
      });
    }
    return tuples;
  }

  private fullProbe(k: unknown[], len = this.fields.length): (e: IndexEntry) => number {
    const dirs = this.dirs;
    return (e) => {
      for (let i = 0; i < len; i++) {
        const c = compareValues(e.k[i], k[i]);
        if (c !== 0) return c * dirs[i]!;
      }
      return 0;
    };
  }

  private tupleKey(k: unknown[]): string {
    return k.length === 1 ? canonicalKey(k[0]) : canonicalKey(k);
  }

  /** Id of another document holding one of these keys, if this index is unique. */
  findConflict(keys: unknown[][], id: string): { key: unknown[] } | undefined {
    if (!this.unique) return undefined;
    for (const k of keys) {
      const holder = this.eq.get(this.tupleKey(k));
      if (holder === undefined) continue;
      if (typeof holder === 'string') {
        if (holder !== id) return { key: k };
      } else {
        for (const other of holder) if (other !== id) return { key: k };
      }
    }
    return undefined;
  }

  add(keys: unknown[][], id: string): void {
    for (const k of keys) {
      if (!this.deferredFrom) this.list.insert({ k, id });
      if (this.hashed) this.addKey(k, id);
    }
  }

  /** The unique-key hash entry of one key tuple. */
  private addKey(k: unknown[], id: string): void {
    const ck = this.tupleKey(k);
    const holder = this.eq.get(ck);
    if (holder === undefined) this.eq.set(ck, id);
    else if (typeof holder === 'string') {
      if (holder !== id) this.eq.set(ck, new Set([holder, id]));
    } else holder.add(id);
  }

  remove(keys: unknown[][], id: string): void {
    for (const k of keys) {
      if (!this.deferredFrom) this.list.remove({ k, id });
      if (!this.hashed) continue;
      const ck = this.tupleKey(k);
      const holder = this.eq.get(ck);
      if (holder === id) this.eq.delete(ck);
      else if (holder instanceof Set) {
        holder.delete(id);
        if (holder.size === 1) this.eq.set(ck, holder.values().next().value!);
      }
    }
  }

  /** Ids of documents whose complete key equals `key` (a hash lookup on unique indexes). */
  idsWithKey(key: unknown[]): Iterable<string> {
    if (!this.hashed) return this.idsWithPrefix(key);
    const holder = this.eq.get(this.tupleKey(key));
    if (holder === undefined) return [];
    return typeof holder === 'string' ? [holder] : holder;
  }

  /** Ids of documents whose first `prefix.length` key components equal `prefix`. */
  *idsWithPrefix(prefix: unknown[]): Generator<string> {
    const probe = this.fullProbe(prefix, prefix.length);
    const list = this.ordered;
    for (const e of list.from(list.lowerBound(probe))) {
      if (probe(e) !== 0) return;
      yield e.id;
    }
  }

  /**
   * Entries within an equality prefix, in index order (or reversed). Used for sort+limit so
   * the collection is never copied or sorted as a whole.
   */
  *scanPrefix(prefix: unknown[], reverse: boolean): Generator<IndexEntry> {
    const probe = this.fullProbe(prefix, prefix.length);
    const list = this.ordered;
    if (!reverse) {
      const start: Cursor = prefix.length ? list.lowerBound(probe) : { block: 0, index: 0 };
      for (const e of list.from(start)) {
        if (prefix.length && probe(e) !== 0) return;
        yield e;
      }
    } else {
      const end = prefix.length ? list.upperBound(probe) : list.endCursor();
      for (const e of list.backFrom(end)) {
        if (prefix.length && probe(e) !== 0) return;
        yield e;
      }
    }
  }

  /**
   * Entries whose first `prefix.length` components equal `prefix` and whose next component lies
   * within [lo, hi] (each bound optional, inclusive or not), in index order. With an empty prefix:
   * a range on the first component.
   */
  *scanRange(lo: Bound | undefined, hi: Bound | undefined, prefix: unknown[] = []): Generator<IndexEntry> {
    const p = prefix.length;
    // Bounds are expressed in value order; translate to list order for descending components.
    const dir = this.dirs[p]!;
    const [first, last] = dir === 1 ? [lo, hi] : [hi, lo];
    const inPrefix = this.fullProbe(prefix, p);
    const list = this.ordered;
    const start = list.lowerBound((e) => {
      const c0 = inPrefix(e);
      if (c0 !== 0 || !first) return c0;
      const c = compareValues(e.k[p], first.value) * dir;
      return c === 0 ? (first.inclusive ? 0 : -1) : c;
    });
    for (const e of list.from(start)) {
      if (p > 0 && inPrefix(e) !== 0) return;
      if (last) {
        const c = compareValues(e.k[p], last.value) * dir;
        if (c > 0 || (c === 0 && !last.inclusive)) return;
      }
      yield e;
    }
  }

  /**
   * Fills this index from `documents` in one pass: every entry collected, sorted once, then appended
   * (an insert in order is an append). Throws E11000 on a unique violation, leaving the index empty.
   */
  build(documents: Iterable<[string, Doc]>): void {
    const entries: IndexEntry[] = [];
    for (const [id, doc] of documents) for (const k of this.keysFor(doc)) entries.push({ k, id });
    this.buildFrom(entries);
  }

  /** build() from entries already collected (start-up collects every index's in one pass). */
  buildFrom(entries: IndexEntry[]): void {
    this.clear();
    entries.sort(this.cmp);
    if (this.hashed) {
      for (const e of entries) {
        if (this.findConflict([e.k], e.id)) {
          const key = e.k;
          this.clear();
          throw new MongoCommandError(ErrorCodes.DuplicateKey, `E11000 duplicate key error index: ${this.name} dup key: ${formatKeyValue(this.fields, key)}`);
        }
        this.addKey(e.k, e.id);
      }
    }
    if (!this.deferredFrom) this.list.fill(entries);
  }

  clear(): void {
    this.list.clear();
    this.eq.clear();
    this.multikey = false;
  }

  describe(): Doc {
    return { ...this.spec, v: this.spec.v ?? 2 };
  }
}

/** Key components in index order: strings (ids, states) compared inline, anything else by compareValues. */
function compareKey(x: unknown, y: unknown): number {
  if (typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  return compareValues(x, y);
}

function compareIds(a: IndexEntry, b: IndexEntry): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The order of an index's entries: key components (each in its direction), then the document id.
 * Specialised for one and two components (most indexes), which every insert and remove calls some
 * 20 times: no loop, no direction array read, the common string case without a call.
 */
function entryOrder(dirs: number[]): (a: IndexEntry, b: IndexEntry) => number {
  const [d0, d1] = dirs;
  if (dirs.length === 1) {
    return (a, b) => {
      const c = compareKey(a.k[0], b.k[0]);
      return c !== 0 ? c * d0! : compareIds(a, b);
    };
  }
  if (dirs.length === 2) {
    return (a, b) => {
      let c = compareKey(a.k[0], b.k[0]);
      if (c !== 0) return c * d0!;
      c = compareKey(a.k[1], b.k[1]);
      return c !== 0 ? c * d1! : compareIds(a, b);
    };
  }
  const n = dirs.length;
  return (a, b) => {
    for (let i = 0; i < n; i++) {
      const c = compareKey(a.k[i], b.k[i]);
      if (c !== 0) return c * dirs[i]!;
    }
    return compareIds(a, b);
  };
}

export interface Bound {
  value: unknown;
  inclusive: boolean;
}

/** Shell-like rendering used in E11000 messages: { email: "a@b.c" }. */
export function formatKeyValue(fields: string[], key: unknown[]): string {
  const parts = fields.map((f, i) => `${f}: ${renderValue(key[i])}`);
  return `{ ${parts.join(', ')} }`;
}

function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  const t = typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
  if (t === 'ObjectId') return `ObjectId('${String(v)}')`;
  if (Array.isArray(v)) return `[ ${v.map(renderValue).join(', ')} ]`;
  if (typeof v === 'object' && !t) {
    const entries = Object.entries(v as Doc).map(([k, x]) => `${k}: ${renderValue(x)}`);
    return `{ ${entries.join(', ')} }`;
  }
  return String(v);
}

export function duplicateKeyError(ns: string, index: Index, key: unknown[]): MongoCommandError {
  const keyValue: Doc = {};
  index.fields.forEach((f, i) => (keyValue[f] = key[i] ?? null));
  return new MongoCommandError(
    ErrorCodes.DuplicateKey,
    `E11000 duplicate key error collection: ${ns} index: ${index.name} dup key: ${formatKeyValue(index.fields, key)}`,
    { keyPattern: { ...index.spec.key }, keyValue },
  );
}
