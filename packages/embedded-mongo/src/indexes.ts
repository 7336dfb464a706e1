/**
 * One secondary (or _id) index: an ordered list of (key tuple, document id) entries, each one string
 * that sorts as its tuple does (indexKey.ts). Equality and prefix lookups are binary searches; sort+limit
 * walks the list in order.
 */
import { Query } from 'mingo';
import { ErrorCodes, MongoCommandError } from './errors';
import { UNDECIDED, elementAtPath, elementEquals, elementIsDate } from './bsonRaw';
import { encodeEntry, encodeEntryFromBson, encodeKey, entryAfterKey, idOf, keyOf } from './indexKey';
import { SortedList, type Cursor } from './sortedList';
import { MEETS_ARRAY, canonicalKey, getPathValues, isPlainObject, singlePathValue, type Doc } from './values';

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

/** What index scans yield: the document id, and the entry it came from (its encoded key and id). */
export interface IndexEntry {
  id: string;
  entry: string;
}

/** Cap on keys produced by one document (compound over arrays multiplies). */
const MAX_KEYS_PER_DOC = 10_000;

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class Index {
  readonly spec: IndexSpec;
  readonly name: string;
  readonly fields: string[];
  /** The fields split on dots. */
  private readonly paths: string[][];
  /** The same, each part as UTF-8 bytes (start-up reads dotted paths in BSON bytes). */
  private readonly pathBytes: Uint8Array[][];
  readonly dirs: number[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partial: Query | undefined;
  /** The partial filter as tests on BSON elements, per field ([] without a filter); undefined when not expressible so (see bsonFields). */
  private readonly partialTests: Array<[string, (buf: Buffer, el: number) => boolean | undefined]> | undefined;
  /** Set once any document stored an array under an indexed path; read it through `multikey`. */
  private multi = false;
  /** The entries (indexKey.ts strings) in order; read it through `ordered` (see `pending`). */
  private readonly list = new SortedList<string>(byString);
  /**
   * Set while the entries are not built yet: builds them, on first need (see `defer`). Writes meanwhile
   * leave the entries alone, because the build reads the documents as they are when it runs.
   * - The _id index starts so: look-ups by _id go to the collection's document map, so most collections
   *   never need _id order, and inserting random string ids into a large ordered list is a binary search
   *   through entries rarely in the CPU cache (under the gateway's load the costliest step of an insert).
   * - A start-up on a data directory defers the non-unique indexes (Collection.finishLoad).
   */
  private pending: (() => void) | undefined;
  /** Why a deferred build failed: the index was dropped, and a query holding it must not read it empty. */
  private failure: unknown;
  /**
   * Unique indexes only: hash of complete keys (encoded key -> id or ids) for O(1) unique checks and
   * equality lookups. Not kept for _id, where the collection's document map plays that role, nor for
   * non-unique indexes: there many documents can share a key (every scheduled timer under
   * `{state, lease_until}`), and keeping a growing Set per key cost more on every write (~15 % of the
   * engine's CPU under the gateway's load) than the binary search of the ordered list costs the lookups.
   */
  private readonly eq = new Map<string, string | Set<string>>();
  private readonly hashed: boolean;

  /** `documents`: for the _id index, the collection's documents by id key (see `pending`). */
  constructor(spec: IndexSpec, documents?: () => Iterable<[string, Doc]>) {
    this.spec = spec;
    this.name = spec.name;
    this.fields = Object.keys(spec.key);
    this.paths = this.fields.map((f) => f.split('.'));
    this.pathBytes = this.paths.map((parts) => parts.map((p) => Buffer.from(p, 'utf8')));
    this.dirs = this.fields.map((f) => (spec.key[f] === -1 ? -1 : 1));
    this.unique = spec.unique === true || this.name === '_id_';
    this.sparse = spec.sparse === true;
    this.partial = spec.partialFilterExpression ? new Query(spec.partialFilterExpression) : undefined;
    this.partialTests = bsonTests(spec.partialFilterExpression);
    this.hashed = this.unique && this.name !== '_id_';
    if (this.isId && documents) {
      this.pending = () => {
        this.beginBuild();
        this.fillFrom(documents());
      };
    }
  }

  /** The entries of `documents`, sorted once (no unique check: the _id index's ids are the map's keys). */
  private fillFrom(documents: Iterable<[string, Doc]>): void {
    const entries: string[] = [];
    for (const [id, doc] of documents) for (const k of this.keysFor(doc)) entries.push(this.entry(k, id));
    entries.sort();
    this.list.fill(entries);
  }

  /** Leaves the entries unbuilt until first needed; `build` then fills them (through `buildFrom`). */
  defer(build: () => void): void {
    this.clear();
    this.pending = build;
  }

  get deferred(): boolean {
    return this.pending !== undefined;
  }

  /** Builds the entries now if they were deferred (the build calls beginBuild first). */
  materialize(): void {
    this.pending?.();
    if (this.failure !== undefined) {
      throw new MongoCommandError(ErrorCodes.IndexNotFound, `index ${this.name} could not be built and was dropped: ${String(this.failure)}`);
    }
  }

  /** A deferred build is under way: the entries are no longer waiting, and writes from now on keep them. */
  beginBuild(): void {
    this.pending = undefined;
  }

  /** The build of a deferred index failed (the collection dropped it). */
  failed(error: unknown): void {
    this.failure = error;
  }

  /** Whether any document stored an array under an indexed path (disables index-ordered sorts). */
  get multikey(): boolean {
    this.materialize();
    return this.multi;
  }

  /** The ordered entries (built now if deferred). */
  private get ordered(): SortedList<string> {
    this.materialize();
    return this.list;
  }

  /** Number of entries (a deferred _id index is built first). */
  get size(): number {
    return this.ordered.size;
  }

  /** The entry of document `id` under key tuple `k` (what `buildFrom` takes). */
  entry(k: unknown[], id: string): string {
    return encodeEntry(k, this.dirs, id);
  }
  /**
   * The top-level fields whose BSON elements `entryFromBson` takes: each key path's first part, then
   * each field of the partial filter. Undefined when it cannot read this index's entries (a partial
   * filter other than equalities to strings or booleans and `$type: 'date'`).
   */
  bsonFields(): string[] | undefined {
    const tests = this.partialTests;
    return tests && [...this.paths.map((p) => p[0]!), ...tests.map(([f]) => f)];
  }

  /**
   * `entry` for a document given as BSON (`at`: where each of `bsonFields` is in `buf`, -1 if absent;
   * overwritten); null when the document has no entry here (sparse, or outside the partial filter),
   * undefined when it must be decoded (an array on a key path, a value of another type...).
   */
  entryFromBson(buf: Buffer, at: Int32Array, id: string): string | null | undefined {
    const n = this.paths.length;
    const tests = this.partialTests!;
    for (let k = 0; k < tests.length; k++) {
      const r = tests[k]![1](buf, at[n + k]!);
      if (r === undefined) return undefined;
      if (!r) return null;
    }
    for (let i = 0; i < n; i++) {
      if (this.paths[i]!.length === 1 || at[i]! < 0) continue;
      const el = elementAtPath(buf, at[i]!, this.pathBytes[i]!);
      if (el === UNDECIDED) return undefined;
      at[i] = el;
    }
    return encodeEntryFromBson(buf, at, this.dirs, this.sparse, id);
  }

  private readsCache: string[] | undefined;

  /** topLevelFields, each once, computed once (a replace asks on every write). */
  get reads(): readonly string[] {
    return (this.readsCache ??= [...new Set(this.topLevelFields())]);
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
      if (vals.length > 1) this.multi = true;
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

  /** Id of another document holding one of these keys, if this index is unique. */
  findConflict(keys: unknown[][], id: string): { key: unknown[] } | undefined {
    if (!this.unique) return undefined;
    this.materialize();
    for (const k of keys) {
      const holder = this.eq.get(encodeKey(k, this.dirs));
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
    if (this.pending) return;
    for (const k of keys) {
      if (!this.hashed) {
        this.list.insert(encodeEntry(k, this.dirs, id));
        continue;
      }
      const key = encodeKey(k, this.dirs);
      this.list.insert(entryAfterKey(key, id));
      this.addKey(key, id);
    }
  }

  /** The unique-key hash entry of one encoded key. */
  private addKey(key: string, id: string): void {
    const holder = this.eq.get(key);
    if (holder === undefined) this.eq.set(key, id);
    else if (typeof holder === 'string') {
      if (holder !== id) this.eq.set(key, new Set([holder, id]));
    } else holder.add(id);
  }

  remove(keys: unknown[][], id: string): void {
    if (this.pending) return;
    for (const k of keys) {
      if (!this.hashed) {
        this.list.remove(encodeEntry(k, this.dirs, id));
        continue;
      }
      const key = encodeKey(k, this.dirs);
      this.list.remove(entryAfterKey(key, id));
      const holder = this.eq.get(key);
      if (holder === id) this.eq.delete(key);
      else if (holder instanceof Set) {
        holder.delete(id);
        if (holder.size === 1) this.eq.set(key, holder.values().next().value!);
      }
    }
  }

  /** Ids of documents whose complete key equals `key` (a hash lookup on unique indexes). */
  idsWithKey(key: unknown[]): Iterable<string> {
    if (!this.hashed) return this.idsWithPrefix(key);
    this.materialize();
    const holder = this.eq.get(encodeKey(key, this.dirs));
    if (holder === undefined) return [];
    return typeof holder === 'string' ? [holder] : holder;
  }

  /** Ids of documents whose first `prefix.length` key components equal `prefix`. */
  *idsWithPrefix(prefix: unknown[]): Generator<string> {
    const p = encodeKey(prefix, this.dirs);
    const list = this.ordered;
    for (const e of list.from(list.lowerBound((e) => (e < p ? -1 : 0)))) {
      if (!e.startsWith(p)) return;
      yield idOf(e);
    }
  }

  /**
   * Entries within an equality prefix, in index order (or reversed). Used for sort+limit so
   * the collection is never copied or sorted as a whole.
   */
  *scanPrefix(prefix: unknown[], reverse: boolean): Generator<IndexEntry> {
    const p = encodeKey(prefix, this.dirs);
    const list = this.ordered;
    if (!reverse) {
      const start: Cursor = p ? list.lowerBound((e) => (e < p ? -1 : 0)) : { block: 0, index: 0 };
      for (const e of list.from(start)) {
        if (!e.startsWith(p)) return;
        yield { id: idOf(e), entry: e };
      }
    } else {
      // Past the prefix: the first entry after p that does not start with it.
      const end = p ? list.lowerBound((e) => (e < p || e.startsWith(p) ? -1 : 0)) : list.endCursor();
      for (const e of list.backFrom(end)) {
        if (!e.startsWith(p)) return;
        yield { id: idOf(e), entry: e };
      }
    }
  }

  /**
   * Entries whose first `prefix.length` components equal `prefix` and whose next component lies
   * within [lo, hi] (each bound optional, inclusive or not), in index order. With an empty prefix:
   * a range on the first component.
   */
  *scanRange(lo: Bound | undefined, hi: Bound | undefined, prefix: unknown[] = []): Generator<IndexEntry> {
    const n = prefix.length;
    // Bounds are expressed in value order; translate to list order for descending components.
    const [first, last] = this.dirs[n] === 1 ? [lo, hi] : [hi, lo];
    const p = encodeKey(prefix, this.dirs);
    const f = first && encodeKey([...prefix, first.value], this.dirs);
    const l = last && encodeKey([...prefix, last.value], this.dirs);
    const list = this.ordered;
    // An entry "starts with" a bound's encoding exactly when its component equals the bound.
    const start = list.lowerBound(
      f === undefined ? (e) => (e < p ? -1 : 0) : first!.inclusive ? (e) => (e < f ? -1 : 0) : (e) => (e < f || e.startsWith(f) ? -1 : 0),
    );
    for (const e of list.from(start)) {
      if (n > 0 && !e.startsWith(p)) return;
      if (l !== undefined && (last!.inclusive ? e > l && !e.startsWith(l) : e >= l)) return;
      yield { id: idOf(e), entry: e };
    }
  }

  /**
   * Fills this index from `documents` in one pass: every entry collected, sorted once, then appended
   * (an insert in order is an append). Throws E11000 on a unique violation, leaving the index empty.
   */
  build(documents: Iterable<[string, Doc]>): void {
    const entries: string[] = [];
    const docs = new Map<string, Doc>();
    for (const [id, doc] of documents) {
      docs.set(id, doc);
      for (const k of this.keysFor(doc)) entries.push(this.entry(k, id));
    }
    this.buildFrom(entries, (id) => docs.get(id));
  }

  /**
   * build() from entries already collected with `entry` (start-up collects every index's in one pass,
   * keysFor having set `multikey`). `docOf` finds a document again, for a duplicate key's message.
   */
  buildFrom(entries: string[], docOf: (id: string) => Doc | undefined): void {
    const multikey = this.multi;
    this.clear();
    this.multi = multikey;
    entries.sort();
    if (this.hashed) {
      for (const e of entries) {
        const key = keyOf(e);
        const id = idOf(e);
        const holder = this.eq.get(key);
        if (holder !== undefined && holder !== id) {
          this.clear();
          const doc = docOf(id);
          const tuple = doc && this.keysFor(doc).find((k) => encodeKey(k, this.dirs) === key);
          throw new MongoCommandError(
            ErrorCodes.DuplicateKey,
            `E11000 duplicate key error index: ${this.name} dup key: ${tuple ? formatKeyValue(this.fields, tuple) : `(documents ${holder} and ${id})`}`,
          );
        }
        this.eq.set(key, id);
      }
    }
    this.list.fill(entries);
  }

  clear(): void {
    this.list.clear();
    this.eq.clear();
    this.multi = false;
  }

  describe(): Doc {
    return { ...this.spec, v: this.spec.v ?? 2 };
  }
}

/**
 * A partial filter as tests on the BSON element of each field it names, for start-up's index builds:
 * `{ field: 'string' | boolean }` and `{ field: { $type: 'date' } }` on top-level fields, and
 * `{ 'a.b': { $exists: true } }` on a path through subdocuments (the test gets the element of its first
 * part), each as a decoded document would be tested (undefined from a test: only a decode can tell, e.g.
 * an array). Undefined for any other filter.
 */
function bsonTests(filter: Doc | undefined): Array<[string, (buf: Buffer, el: number) => boolean | undefined]> | undefined {
  if (!filter) return [];
  const tests: Array<[string, (buf: Buffer, el: number) => boolean | undefined]> = [];
  for (const [field, want] of Object.entries(filter)) {
    if (field.startsWith('$')) return undefined;
    if (isPlainObject(want) && Object.keys(want).length === 1 && want.$exists === true) {
      // A scalar or an empty array on the way is a missing value (elementAtPath), which $exists: true
      // refuses; an array with elements on the way is left to a decode (its elements' fields count).
      const parts = field.split('.').map((p) => Buffer.from(p, 'utf8'));
      tests.push([field.split('.')[0]!, (buf, el) => {
        if (el < 0) return false;
        const at = elementAtPath(buf, el, parts);
        return at === UNDECIDED ? undefined : at >= 0;
      }]);
      continue;
    }
    if (field.includes('.')) return undefined;
    if (typeof want === 'boolean' || (typeof want === 'string' && !want.includes('\ufffd'))) {
      const value = typeof want === 'boolean' ? want : Buffer.from(want, 'utf8');
      tests.push([field, (buf, el) => elementEquals(buf, el, value)]);
    } else if (isPlainObject(want) && Object.keys(want).length === 1 && want.$type === 'date') {
      tests.push([field, elementIsDate]);
    } else return undefined;
  }
  return tests;
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
