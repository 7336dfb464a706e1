/**
 * Update documents: operator updates ($set, $inc, $push...), replacements and pipeline updates.
 * Always returns a new document (operator updates copy on write, see Draft); the stored version is
 * left untouched so the caller can install the result atomically (or throw it away on a unique
 * violation).
 */
import { Aggregator } from 'mingo';
import { mingoQuery, type Matcher } from './mingoQuery';
import { Decimal128, Long, ObjectId, Timestamp } from 'bson';
import { ErrorCodes, MongoCommandError, badValue } from './errors';
import { compareValues, deepClone, deepEqual, getPath, isOperatorObject, isPlainObject, setOwn, toNumber, type Doc } from './values';

interface Ctx {
  filter: Doc | undefined;
  isInsert: boolean;
}

type Container = Doc | unknown[];

const PathNotViable = 28;

function describe(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/**
 * The document an operator update builds, copy on write: a shallow copy of the stored version whose
 * nested objects and arrays are copied only when a write goes through them. What the update does not
 * touch stays shared with the stored version; that is safe because stored documents are never
 * mutated (see collection.ts), and it spares copying whole documents (with their outbox arrays) for
 * a `$set` of two flags. (Collection.replace still computes every index's keys from both versions:
 * skipping the indexes whose top-level fields are shared measured no gain once keysFor was cheap.)
 */
class Draft {
  readonly doc: Doc;
  /** The containers this draft created or copied: the only ones it may write into. */
  private readonly mine = new Set<object>();

  constructor(base: Doc) {
    this.doc = this.copy(base);
  }

  private copy<C extends Container>(c: C): C {
    let out: Container;
    if (Array.isArray(c)) out = c.slice();
    else {
      out = {};
      for (const k of Object.keys(c)) setOwn(out, k, c[k]);
    }
    this.mine.add(out);
    return out as C;
  }

  /**
   * Walks to the parent of the last path segment, creating objects when `create` is set and
   * copying every shared container on the way, so that the caller may write into the parent.
   */
  parentOf(path: string, create: boolean): { parent: Container; key: string } | undefined {
    const parts = path.split('.');
    // Walking into "__proto__" would reach Object.prototype and pollute every object in the process.
    if (parts.includes('__proto__')) throw badValue(`field path '${path}' is not allowed`);
    let cur: Container = this.doc;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i]!;
      let next = readChild(cur, p);
      if (next === undefined || next === null) {
        if (!create) return undefined;
        const created: Doc = {};
        this.mine.add(created);
        writeChild(cur, p, created);
        next = created;
      } else if (!isPlainObject(next) && !Array.isArray(next)) {
        if (!create) return undefined;
        throw new MongoCommandError(
          PathNotViable,
          `Cannot create field '${parts[i + 1]}' in element {${p}: ${describe(next)}}`,
        );
      } else if (!this.mine.has(next)) {
        next = this.copy(next as Container);
        writeChild(cur, p, next);
      }
      cur = next as Container;
    }
    return { parent: cur, key: parts[parts.length - 1]! };
  }
}

function readChild(c: Container, key: string): unknown {
  if (Array.isArray(c)) return /^\d+$/.test(key) ? c[Number(key)] : undefined;
  return Object.hasOwn(c, key) ? c[key] : undefined; // never inherited members like "constructor"
}

function writeChild(c: Container, key: string, value: unknown): void {
  if (Array.isArray(c)) {
    if (!/^\d+$/.test(key)) throw new MongoCommandError(PathNotViable, `Cannot create field '${key}' in an array`);
    const i = Number(key);
    while (c.length < i) c.push(null);
    c[i] = value;
  } else setOwn(c, key, value);
}

function setField(d: Draft, path: string, value: unknown): void {
  const { parent, key } = d.parentOf(path, true)!;
  writeChild(parent, key, value);
}

function unsetField(d: Draft, path: string): void {
  const loc = d.parentOf(path, false);
  if (!loc) return;
  if (Array.isArray(loc.parent)) {
    if (/^\d+$/.test(loc.key) && Number(loc.key) < loc.parent.length) loc.parent[Number(loc.key)] = null;
  } else delete loc.parent[loc.key];
}

function isNumeric(v: unknown): boolean {
  if (typeof v === 'number') return true;
  const t = v && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
  return t === 'Long' || t === 'Decimal128' || t === 'Int32' || t === 'Double';
}

function arith(a: unknown, b: unknown, op: 'add' | 'mul'): unknown {
  const kind = (v: unknown) => (v as { _bsontype?: string })?._bsontype;
  if (kind(a) === 'Decimal128' || kind(b) === 'Decimal128') {
    const r = op === 'add' ? toNumber(a) + toNumber(b) : toNumber(a) * toNumber(b);
    return Decimal128.fromString(String(r));
  }
  if (kind(a) === 'Long' || kind(b) === 'Long') {
    const x = Long.fromValue(typeof a === 'number' ? Long.fromNumber(a) : (a as Long));
    const y = typeof b === 'number' ? Long.fromNumber(b) : (b as Long);
    return op === 'add' ? x.add(y) : x.multiply(y);
  }
  return op === 'add' ? toNumber(a) + toNumber(b) : toNumber(a) * toNumber(b);
}

function requireArray(path: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) {
    throw new MongoCommandError(
      ErrorCodes.BadValue,
      `The field '${path}' must be an array but is of type ${typeof v} in document`,
    );
  }
  return v;
}

/** $pull condition: a query on elements, an operator expression, or a value to compare with. */
function pullMatcher(cond: unknown): (elem: unknown) => boolean {
  if (isOperatorObject(cond)) {
    const q = mingoQuery({ v: cond });
    return (e) => q.test({ v: e });
  }
  if (isPlainObject(cond)) {
    const fast = pullByFieldValues(cond);
    let q: Matcher | undefined;
    return (e) => {
      if (!isPlainObject(e)) return false;
      const hit = fast?.(e);
      if (hit !== undefined) return hit;
      q ??= mingoQuery(cond);
      return q.test(e);
    };
  }
  return (e) => compareValues(e, cond) === 0;
}

/**
 * `{ field: value }` or `{ field: { $in: [values] } }` with primitive values (an outbox clean-up:
 * `$pull: { pending_events: { _id: { $in: ids } } }`) without a mingo query per update. Undefined
 * (ask mingo) when the element's value is not a primitive.
 */
function pullByFieldValues(cond: Doc): ((elem: Doc) => boolean | undefined) | undefined {
  const keys = Object.keys(cond);
  if (keys.length !== 1) return undefined;
  const k = keys[0]!;
  if (k.startsWith('$') || k.includes('.')) return undefined;
  const isPrimitive = (v: unknown) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && !Number.isNaN(v));
  const c = cond[k];
  let values: unknown[];
  if (isPrimitive(c)) values = [c];
  else if (isPlainObject(c) && Object.keys(c).length === 1 && Array.isArray(c.$in) && c.$in.every(isPrimitive)) values = c.$in;
  else return undefined;
  const set = new Set(values);
  return (e) => {
    const v = Object.hasOwn(e, k) ? e[k] : undefined;
    if (v === undefined || v === null) return false;
    return isPrimitive(v) ? set.has(v) : undefined;
  };
}

type OpFn = (d: Draft, path: string, arg: unknown) => void;

const OPS: Record<string, OpFn> = {
  $set: (d, path, arg) => setField(d, path, deepClone(arg)),
  $setOnInsert: (d, path, arg) => setField(d, path, deepClone(arg)),
  $unset: (d, path) => unsetField(d, path),
  $inc: (d, path, arg) => numericOp(d, path, arg, 'add', '$inc'),
  $mul: (d, path, arg) => numericOp(d, path, arg, 'mul', '$mul'),
  $min: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    if (cur === undefined || compareValues(arg, cur) < 0) setField(d, path, deepClone(arg));
  },
  $max: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    if (cur === undefined || compareValues(arg, cur) > 0) setField(d, path, deepClone(arg));
  },
  $rename: (d, path, arg) => {
    if (typeof arg !== 'string') throw badValue(`The 'to' field for $rename must be a string: ${path}`);
    const cur = getPath(d.doc, path);
    if (cur === undefined) return;
    unsetField(d, path);
    setField(d, arg, cur);
  },
  $currentDate: (d, path, arg) => {
    const wantsTs = isPlainObject(arg) && arg.$type === 'timestamp';
    const now = new Date();
    setField(d, path, wantsTs ? new Timestamp({ t: Math.floor(now.getTime() / 1000), i: 1 }) : now);
  },
  $push: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    const arr = cur === undefined ? [] : [...requireArray(path, cur)];
    const mods = isPlainObject(arg) && '$each' in arg ? arg : undefined;
    const items = mods ? requireArray('$each', mods.$each).map(deepClone) : [deepClone(arg)];
    const pos = mods?.$position;
    if (typeof pos === 'number') {
      const at = pos < 0 ? Math.max(0, arr.length + pos) : Math.min(pos, arr.length);
      arr.splice(at, 0, ...items);
    } else arr.push(...items);
    let result = arr;
    if (mods && mods.$sort !== undefined) result = sortArray(result, mods.$sort);
    if (mods && typeof mods.$slice === 'number') {
      const n = mods.$slice;
      result = n >= 0 ? result.slice(0, n) : result.slice(n);
    }
    setField(d, path, result);
  },
  $addToSet: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    const arr = cur === undefined ? [] : [...requireArray(path, cur)];
    const items = isPlainObject(arg) && '$each' in arg ? requireArray('$each', arg.$each) : [arg];
    for (const it of items) if (!arr.some((e) => deepEqual(e, it))) arr.push(deepClone(it));
    setField(d, path, arr);
  },
  $pop: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    if (cur === undefined) return;
    const arr = [...requireArray(path, cur)];
    if (toNumber(arg) === -1) arr.shift();
    else arr.pop();
    setField(d, path, arr);
  },
  $pull: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    if (cur === undefined) return;
    const m = pullMatcher(arg);
    setField(d, path, requireArray(path, cur).filter((e) => !m(e)));
  },
  $pullAll: (d, path, arg) => {
    const cur = getPath(d.doc, path);
    if (cur === undefined) return;
    const vals = requireArray(path, arg);
    setField(d, path, requireArray(path, cur).filter((e) => !vals.some((v) => compareValues(e, v) === 0)));
  },
};

function numericOp(d: Draft, path: string, arg: unknown, op: 'add' | 'mul', name: string): void {
  if (!isNumeric(arg)) throw new MongoCommandError(ErrorCodes.TypeMismatch, `Cannot ${name === '$inc' ? 'increment' : 'multiply'} with non-numeric argument: {${path}: ${describe(arg)}}`);
  const cur = getPath(d.doc, path);
  if (cur === undefined) {
    setField(d, path, op === 'add' ? arg : arith(0, arg, 'mul'));
    return;
  }
  if (!isNumeric(cur)) {
    throw new MongoCommandError(
      ErrorCodes.TypeMismatch,
      `Cannot apply ${name} to a value of non-numeric type. {_id: ${describe(d.doc._id)}} has the field '${path}' of non-numeric type ${cur === null ? 'null' : typeof cur}`,
    );
  }
  setField(d, path, arith(cur, arg, op));
}

function sortArray(arr: unknown[], spec: unknown): unknown[] {
  if (typeof spec === 'number') return [...arr].sort((a, b) => compareValues(a, b) * spec);
  if (isPlainObject(spec)) {
    const keys = Object.entries(spec);
    return [...arr].sort((a, b) => {
      for (const [k, d] of keys) {
        const c = compareValues(getPath(a, k), getPath(b, k));
        if (c !== 0) return c * (d === -1 ? -1 : 1);
      }
      return 0;
    });
  }
  return arr;
}

/** Expands `$` and `$[]` segments into concrete paths for this document. */
function expandPositional(doc: Doc, path: string, ctx: Ctx): string[] {
  if (!path.includes('$')) return [path];
  const parts = path.split('.');
  const i = parts.findIndex((p) => p.startsWith('$'));
  if (i < 0) return [path];
  const prefix = parts.slice(0, i).join('.');
  const rest = parts.slice(i + 1).join('.');
  const seg = parts[i]!;
  const arr = getPath(doc, prefix);
  const join = (idx: number) => (rest ? `${prefix}.${idx}.${rest}` : `${prefix}.${idx}`);
  if (seg === '$[]') {
    if (!Array.isArray(arr)) {
      if (ctx.isInsert) return [];
      throw badValue(`The path '${prefix}' must exist in the document in order to apply array updates.`);
    }
    return arr.flatMap((_, idx) => expandPositional(doc, join(idx), ctx));
  }
  if (seg === '$') {
    const idx = Array.isArray(arr) ? positionalIndex(arr, prefix, ctx.filter) : -1;
    if (idx < 0) throw badValue('The positional operator did not find the match needed from the query.');
    return expandPositional(doc, join(idx), ctx);
  }
  throw badValue(`arrayFilters identifiers (${seg}) are not supported by the embedded engine`);
}

/** Index of the first array element matched by the query conditions on that array's path. */
function positionalIndex(arr: unknown[], prefix: string, filter: Doc | undefined): number {
  if (!filter) return -1;
  const conds: Doc = {};
  const gather = (f: Doc) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) v.forEach((s) => isPlainObject(s) && gather(s));
      else if (k === prefix) conds.x = v;
      else if (k.startsWith(prefix + '.')) conds['x' + k.slice(prefix.length)] = v;
    }
  };
  gather(filter);
  if (Object.keys(conds).length === 0) return -1;
  const q = mingoQuery(conds);
  return arr.findIndex((e) => q.test({ x: [e] }));
}

export function isReplacement(update: unknown): boolean {
  if (!isPlainObject(update)) return false;
  const keys = Object.keys(update);
  return keys.length === 0 || !keys[0]!.startsWith('$');
}

function withIdFirst(doc: Doc, id: unknown): Doc {
  const out: Doc = { _id: id };
  for (const k of Object.keys(doc)) if (k !== '_id') setOwn(out, k, doc[k]);
  return out;
}

function immutableIdError(): MongoCommandError {
  return new MongoCommandError(
    ErrorCodes.ImmutableField,
    "Performing an update on the path '_id' would modify the immutable field '_id'",
  );
}

/** Returns the updated copy of `doc`. */
export function applyUpdate(doc: Doc, update: unknown, ctx: Ctx): Doc {
  if (Array.isArray(update)) {
    const res = new Aggregator(update as Doc[]).run([deepClone(doc)]);
    const out = res[0] as Doc | undefined;
    if (!out) throw badValue('pipeline update produced no document');
    if (!ctx.isInsert && compareValues(out._id, doc._id) !== 0) throw immutableIdError();
    return withIdFirst(out, doc._id ?? out._id);
  }
  if (!isPlainObject(update)) throw badValue('update must be an object or a pipeline');
  if (isReplacement(update)) {
    if (update._id !== undefined && doc._id !== undefined && compareValues(update._id, doc._id) !== 0) {
      throw immutableIdError();
    }
    return withIdFirst(deepClone(update), doc._id ?? update._id);
  }
  const draft = new Draft(doc);
  const out = draft.doc;
  for (const [op, fields] of Object.entries(update)) {
    const fn = OPS[op];
    if (!fn) {
      throw new MongoCommandError(
        ErrorCodes.FailedToParse,
        `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
      );
    }
    if (op === '$setOnInsert' && !ctx.isInsert) continue;
    if (!isPlainObject(fields)) {
      throw new MongoCommandError(
        ErrorCodes.FailedToParse,
        `Modifiers operate on fields but we found type ${typeof fields} instead.`,
      );
    }
    for (const [path, arg] of Object.entries(fields)) {
      for (const p of expandPositional(out, path, ctx)) fn(draft, p, arg);
    }
  }
  if (!ctx.isInsert && compareValues(out._id, doc._id) !== 0) throw immutableIdError();
  return out;
}

/** The document an upsert inserts: equality fields of the filter, then the update applied. */
export function buildUpsertDoc(filter: Doc | undefined, update: unknown): Doc {
  const draft = new Draft({});
  const base = draft.doc;
  const addEq = (f: Doc) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) v.forEach((s) => isPlainObject(s) && addEq(s));
      else if (k.startsWith('$') || v instanceof RegExp) continue;
      else if (!isOperatorObject(v)) setField(draft, k, deepClone(v));
      else if ('$eq' in v) setField(draft, k, deepClone(v.$eq));
    }
  };
  if (filter) addEq(filter);
  let doc: Doc;
  if (isReplacement(update)) {
    doc = deepClone(update as Doc);
    if (doc._id === undefined && base._id !== undefined) doc._id = base._id;
  } else {
    doc = applyUpdate(base, update, { filter, isInsert: true });
    // As MongoDB: the `_id` the filter names is the inserted document's; `$setOnInsert` may not change it.
    if (base._id !== undefined && compareValues(doc._id, base._id) !== 0) throw immutableIdError();
  }
  return withIdFirst(doc, doc._id ?? new ObjectId());
}

export { deepEqual };
