/**
 * BSON value helpers: MongoDB's cross-type comparison order, a canonical string key
 * (used for Map lookups by _id and for de-duplication), deep clone and path access.
 */
import { Binary, Long, ObjectId, Timestamp } from 'bson';

export type Doc = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Doc {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True for `{ $gt: 1 }`-style objects (first key is an operator). */
export function isOperatorObject(v: unknown): v is Doc {
  if (!isPlainObject(v)) return false;
  for (const k in v) return k.startsWith('$');
  return false;
}

function bsonType(v: object): string | undefined {
  return (v as { _bsontype?: string })._bsontype;
}

/** Rank per https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/ */
export function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 2;
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 3;
    case 'string':
      return 4;
    case 'boolean':
      return 9;
    case 'object':
      break;
    default:
      return 14;
  }
  if (Array.isArray(v)) return 6;
  if (v instanceof Date) return 10;
  if (v instanceof RegExp) return 12;
  if (v instanceof Uint8Array) return 7;
  switch (bsonType(v)) {
    case undefined:
      return 5;
    case 'MinKey':
      return 1;
    case 'MaxKey':
      return 13;
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return 3;
    case 'BSONSymbol':
      return 4;
    case 'Binary':
      return 7;
    case 'ObjectId':
      return 8;
    case 'Timestamp':
      return 11;
    case 'BSONRegExp':
      return 12;
    default:
      return 5;
  }
}

export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  const t = v && typeof v === 'object' ? bsonType(v) : undefined;
  if (t === 'Long') return (v as Long).toNumber();
  if (t === 'Int32' || t === 'Double') return (v as { valueOf(): number }).valueOf();
  if (t === 'Decimal128') return Number.parseFloat(String(v));
  return Number.NaN;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

function cmpPrim<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total order over BSON values, as the server uses for sorting and index keys. */
export function compareValues(a: unknown, b: unknown): number {
  // Fast paths for what index keys mostly are (ids, timestamps, counters); same results as below.
  const ta = typeof a;
  if (ta === typeof b) {
    if (ta === 'string') return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    if (ta === 'number' && a === a && b === b) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1:
    case 2:
    case 13:
      return 0;
    case 3: {
      const x = typeof a === 'number' ? a : toNumber(a);
      const y = typeof b === 'number' ? b : toNumber(b);
      if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1; // NaN sorts before all numbers
      if (Number.isNaN(y)) return 1;
      return cmpPrim(x, y);
    }
    case 4:
      return cmpPrim(String(a), String(b));
    case 5:
      return compareObjects(a as Doc, b as Doc);
    case 6: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
      return cmpPrim(x.length, y.length);
    }
    case 7: {
      const x = a instanceof Uint8Array ? a : (a as Binary).buffer;
      const y = b instanceof Uint8Array ? b : (b as Binary).buffer;
      if (x.length !== y.length) return x.length < y.length ? -1 : 1;
      const sa = a instanceof Uint8Array ? 0 : (a as Binary).sub_type;
      const sb = b instanceof Uint8Array ? 0 : (b as Binary).sub_type;
      if (sa !== sb) return sa < sb ? -1 : 1;
      return compareBytes(x, y);
    }
    case 8:
      return compareBytes((a as ObjectId).id, (b as ObjectId).id);
    case 9:
      return a === b ? 0 : a ? 1 : -1;
    case 10:
      return cmpPrim((a as Date).getTime(), (b as Date).getTime());
    case 11: {
      const x = a as Timestamp;
      const y = b as Timestamp;
      return x.t !== y.t ? cmpPrim(x.t, y.t) : cmpPrim(x.i, y.i);
    }
    case 12: {
      const x = a as { source: string; flags?: string; pattern?: string; options?: string };
      const y = b as typeof x;
      const c = cmpPrim(x.source ?? x.pattern ?? '', y.source ?? y.pattern ?? '');
      return c !== 0 ? c : cmpPrim(x.flags ?? x.options ?? '', y.flags ?? y.options ?? '');
    }
    default:
      return 0;
  }
}

function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]!];
    const vb = b[kb[i]!];
    const rt = typeRank(va) - typeRank(vb);
    if (rt !== 0) return rt < 0 ? -1 : 1;
    const kc = cmpPrim(ka[i]!, kb[i]!);
    if (kc !== 0) return kc;
    const c = compareValues(va, vb);
    if (c !== 0) return c;
  }
  return cmpPrim(ka.length, kb.length);
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  return compareValues(a, b) === 0;
}

/**
 * Canonical string for a value such that two values get the same key exactly when
 * MongoDB considers them equal (1 == 1.0 == Long(1); Dates by instant; ObjectIds by bytes).
 *
 * A string is its own key: string _ids are the common case, and the key is then the very string
 * the driver sent (no concatenation per look-up, and its hash, cached on it, serves every Map).
 * Every other key starts with "\0" and a type tag (a string that itself starts with "\0" is tagged
 * too), so keys of different values never collide.
 */
export function canonicalKey(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v.charCodeAt(0) === 0 ? '\0s' + v : v;
    case 'number':
      return '\0n' + (v === 0 ? '0' : String(v));
    case 'boolean':
      return v ? '\0b1' : '\0b0';
    case 'undefined':
      return '\0z';
    case 'bigint':
      return '\0n' + v.toString();
    default:
      break;
  }
  if (v === null) return '\0z';
  if (v instanceof Date) return '\0d' + v.getTime();
  if (Array.isArray(v)) return '\0a' + JSON.stringify(v.map(canonicalKey));
  if (v instanceof RegExp) return '\0r' + v.source + '/' + v.flags;
  if (v instanceof Uint8Array) return '\0x0:' + Buffer.from(v).toString('base64');
  const obj = v as object;
  switch (bsonType(obj)) {
    case undefined: {
      const parts: string[] = [];
      for (const k of Object.keys(obj)) parts.push(k, canonicalKey((obj as Doc)[k]));
      return '\0O' + JSON.stringify(parts);
    }
    case 'ObjectId':
      return '\0o' + (obj as ObjectId).toHexString();
    case 'Long': {
      const l = obj as Long;
      const n = l.toNumber();
      return Number.isSafeInteger(n) ? '\0n' + (n === 0 ? '0' : String(n)) : '\0n' + l.toString();
    }
    case 'Int32':
    case 'Double':
    case 'Decimal128': {
      const n = toNumber(obj);
      return Number.isFinite(n) ? '\0n' + (n === 0 ? '0' : String(n)) : '\0N' + String(obj);
    }
    case 'Binary': {
      const b = obj as Binary;
      return '\0x' + b.sub_type + ':' + Buffer.from(b.buffer).toString('base64');
    }
    case 'Timestamp':
      return '\0t' + (obj as Timestamp).toString();
    case 'MinKey':
      return '\0-';
    case 'MaxKey':
      return '\0+';
    default:
      return '\0u' + JSON.stringify(obj);
  }
}

/**
 * Assigns an own property, also when the key is "__proto__" (BSON allows that field name; a
 * plain assignment would change the object's prototype instead).
 */
export function setOwn(obj: Doc, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Deep copy of plain objects/arrays. BSON value objects (ObjectId, Binary, Decimal128...) are
 * immutable in practice and shared; Dates are copied because they are mutable.
 */
export function deepClone<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(deepClone) as T;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  if (!isPlainObject(v)) return v;
  const out: Doc = {};
  for (const k of Object.keys(v)) setOwn(out, k, deepClone((v as Doc)[k]));
  return out as T;
}

/** Structural equality that also distinguishes field order (as BSON does). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (let i = 0; i < ka.length; i++) {
      if (ka[i] !== kb[i] || !deepEqual(a[ka[i]!], b[kb[i]!])) return false;
    }
    return true;
  }
  if (isPlainObject(a) || isPlainObject(b)) return false;
  return typeRank(a) === typeRank(b) && canonicalKey(a) === canonicalKey(b);
}

/** Value at a dotted path without array fan-out (numeric parts index arrays). */
export function getPath(doc: unknown, path: string): unknown {
  if (!path.includes('.')) return isObjectLike(doc) ? own(doc as Doc, path) : undefined;
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (!isObjectLike(cur)) return undefined;
    cur = own(cur as Doc, part);
  }
  return cur;
}

/** Own property only: document paths must never resolve to inherited members ("constructor"). */
function own(obj: Doc, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function isObjectLike(v: unknown): boolean {
  return v !== null && typeof v === 'object' && (Array.isArray(v) || isPlainObject(v));
}

/**
 * All values a document holds at `path` the way indexes and sorts see them: arrays on the way
 * (and at the end) fan out into their elements. Missing yields `undefined`.
 */
export function getPathValues(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split('.'), 0, out);
  return out;
}

/** What singlePathValue returns for a path that meets an array (where getPathValues fans out). */
export const MEETS_ARRAY: unique symbol = Symbol('meets an array');

/**
 * getPathValues for the common case of a path (already split on dots) that meets no array: its one
 * value, undefined when missing, without the result array and the recursion. MEETS_ARRAY when an
 * array lies on the path or at its end: then the caller needs getPathValues.
 */
export function singlePathValue(doc: unknown, parts: string[]): unknown {
  let val = doc;
  for (let i = 0; i < parts.length; i++) {
    if (Array.isArray(val)) return MEETS_ARRAY;
    if (!isPlainObject(val)) return undefined;
    val = own(val, parts[i]!);
  }
  return Array.isArray(val) ? MEETS_ARRAY : val;
}

function collect(val: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    if (Array.isArray(val)) {
      if (val.length === 0) out.push(val);
      else for (const e of val) out.push(e);
    } else out.push(val);
    return;
  }
  const part = parts[i]!;
  if (Array.isArray(val)) {
    if (/^\d+$/.test(part)) {
      collect(val[Number(part)], parts, i + 1, out);
      return;
    }
    let any = false;
    for (const e of val) {
      if (isPlainObject(e)) {
        collect(own(e, part), parts, i + 1, out);
        any = true;
      }
    }
    if (!any) out.push(undefined);
    return;
  }
  if (isPlainObject(val)) collect(own(val, part), parts, i + 1, out);
  else out.push(undefined);
}

export { Long, ObjectId };
