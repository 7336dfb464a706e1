/**
 * Reading and writing BSON without decoding whole documents: start-up reads hundreds of thousands of
 * stored documents and needs only their index keys, and snapshots write stored bytes as they are.
 * Everything here follows the BSON spec (bsonspec.org): a document is int32 length, elements, 0x00;
 * an element is a type byte, a NUL-terminated name and a value whose size the type gives.
 */
import { deserialize, serialize } from 'bson';
import type { Doc } from './values';

const BSON_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;

/** Size in bytes of the value of an element of `type` starting at `at`. */
function valueSize(buf: Uint8Array, type: number, at: number): number {
  switch (type) {
    case 0x01: // double
    case 0x09: // UTC datetime
    case 0x11: // timestamp
    case 0x12: // int64
      return 8;
    case 0x02: // string
    case 0x0d: // JavaScript code
    case 0x0e: // symbol
      return 4 + int32(buf, at);
    case 0x03: // document
    case 0x04: // array
    case 0x0f: // code with scope
      return int32(buf, at);
    case 0x05: // binary
      return 5 + int32(buf, at);
    case 0x06: // undefined
    case 0x0a: // null
    case 0x7f: // max key
    case 0xff: // min key
      return 0;
    case 0x07: // ObjectId
      return 12;
    case 0x08: // boolean
      return 1;
    case 0x0b: {
      // regex: two cstrings
      let p = at;
      while (buf[p] !== 0) p++;
      p++;
      while (buf[p] !== 0) p++;
      return p + 1 - at;
    }
    case 0x0c: // DBPointer
      return 4 + int32(buf, at) + 12;
    case 0x10: // int32
      return 4;
    case 0x13: // decimal128
      return 16;
    default:
      throw new Error(`BSON: unknown element type 0x${type.toString(16)}`);
  }
}

function int32(buf: Uint8Array, at: number): number {
  return (buf[at]! | (buf[at + 1]! << 8) | (buf[at + 2]! << 16) | (buf[at + 3]! << 24)) >>> 0;
}

/** Top-level field names to pick, as bytes (compared without decoding each element's name). */
export class FieldPicker {
  private readonly names: Uint8Array[];
  private readonly strings: string[];
  /** Scratch positions for pick and value. */
  private readonly at: Int32Array;

  constructor(names: Iterable<string>) {
    this.strings = [...new Set(names)];
    this.names = this.strings.map((n) => Buffer.from(n, 'utf8'));
    this.at = new Int32Array(this.names.length);
  }

  /** Number of distinct names (the length `locate` fills). */
  get size(): number {
    return this.names.length;
  }

  /** Position of `name` among the picked names (what `locate` fills), -1 if not picked. */
  slotOf(name: string): number {
    return this.strings.indexOf(name);
  }

  /** Which picked name the element name at [start, end) is, or -1. */
  private which(buf: Uint8Array, start: number, end: number): number {
    const len = end - start;
    for (let j = 0; j < this.names.length; j++) {
      const n = this.names[j]!;
      if (n.length === len && bytesAt(buf, start, n)) return j;
    }
    return -1;
  }

  /**
   * The document at `offset` of `buf` with only the picked top-level fields, decoded. Strings,
   * numbers, dates, booleans and nulls are read in place; any other value (a subdocument, an array,
   * an ObjectId...) goes through the BSON library, so every field reads back exactly as in a full
   * decode.
   */
  pick(bytes: Uint8Array, offset = 0): Doc {
    const buf = asBuffer(bytes);
    const at = this.at;
    this.locate(buf, offset, at);
    const out: Doc = {};
    for (let j = 0; j < at.length; j++) if (at[j]! >= 0) out[this.strings[j]!] = elementValue(buf, at[j]!);
    return out;
  }

  /** The value of the first picked name in the document (undefined if absent): a document's _id without an object around it. */
  value(bytes: Uint8Array, offset = 0): unknown {
    const buf = asBuffer(bytes);
    this.locate(buf, offset, this.at);
    return this.at[0]! >= 0 ? elementValue(buf, this.at[0]!) : undefined;
  }

  /**
   * Where the picked fields are in the document at `offset` of `buf`, without decoding anything:
   * `at[j]` gets the offset of the element (its type byte) of the j-th picked name, -1 when absent.
   * The walk stops once every name is found (a name appears once in a document).
   */
  locate(buf: Uint8Array, offset: number, at: Int32Array): void {
    at.fill(-1);
    const end = offset + int32(buf, offset) - 1;
    let found = 0;
    let p = offset + 4;
    while (p < end) {
      const elemStart = p;
      const type = buf[p++]!;
      const nameStart = p;
      while (buf[p] !== 0) p++;
      const j = this.which(buf, nameStart, p++);
      if (j >= 0) {
        at[j] = elemStart;
        if (++found === at.length) return;
      }
      p += valueSize(buf, type, p);
    }
  }
}

/** The value of the element starting (at its type byte) at `elemStart`. */
function elementValue(buf: Buffer, elemStart: number): unknown {
  const type = buf[elemStart]!;
  const p = valueStart(buf, elemStart);
  return readValue(buf, type, p, elemStart, p + valueSize(buf, type, p));
}

/** Whether `bytes` are at `at` of `buf`. */
function bytesAt(buf: Uint8Array, at: number, bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

/** Where the value of the element at `el` starts (past its type byte and name). */
function valueStart(buf: Uint8Array, el: number): number {
  let p = el + 1;
  while (buf[p] !== 0) p++;
  return p + 1;
}

/** What elementAtPath gives when the path meets something only a decode can follow (a non-empty array, a DBRef...). */
export const UNDECIDED = -2;

/**
 * Follows a dotted path (its parts as UTF-8 bytes) down from the element at `el` (which holds
 * `parts[0]`) through subdocuments,
 * as singlePathValue does on a decoded document: the offset of the element at the end of the path,
 * -1 when it is missing (a scalar, or an empty array, on the way: what getPathValues makes of those),
 * UNDECIDED when a decode must tell (an array with elements on the way, or a subdocument the BSON
 * library would not decode as a plain object).
 */
export function elementAtPath(buf: Uint8Array, el: number, parts: Uint8Array[]): number {
  for (let i = 1; i < parts.length; i++) {
    const type = buf[el]!;
    const v = valueStart(buf, el);
    if (type === 0x04) return int32(buf, v) === 5 ? -1 : UNDECIDED;
    if (type !== 0x03) return -1;
    const end = v + int32(buf, v) - 1;
    const name = parts[i]!;
    let found = -1;
    for (let p = v + 4; p < end; ) {
      const at = p;
      const t = buf[p++]!;
      const nameStart = p;
      while (buf[p] !== 0) p++;
      if (buf[nameStart] === 0x24) return UNDECIDED; // a $ name: the BSON library may decode a DBRef, not a plain object
      if (p - nameStart === name.length && bytesAt(buf, nameStart, name)) found = at;
      p++;
      p += valueSize(buf, t, p);
    }
    if (found < 0) return -1;
    el = found;
  }
  return el;
}

/**
 * Whether the element at `el` (-1: missing) equals `value` (a string, as UTF-8 bytes, or a boolean), as a partial
 * filter's `{ field: value }` tests a decoded document; undefined when a decode must tell (an array,
 * whose elements the filter would match, or a type not read here).
 */
export function elementEquals(buf: Uint8Array, el: number, value: Uint8Array | boolean): boolean | undefined {
  if (el < 0) return false;
  const type = buf[el]!;
  const v = valueStart(buf, el);
  if (typeof value !== 'boolean' && type === 0x02) return int32(buf, v) === value.length + 1 && bytesAt(buf, v + 4, value);
  if (typeof value === 'boolean' && type === 0x08) return (buf[v] === 1) === value;
  // Values of other types never equal a string or a boolean.
  return isScalarType(type) ? false : undefined;
}

/** Whether the element at `el` (-1: missing) is a date, as `{ $type: 'date' }` tests a decoded value; undefined for an array. */
export function elementIsDate(buf: Uint8Array, el: number): boolean | undefined {
  if (el < 0) return false;
  const type = buf[el]!;
  return type === 0x09 ? true : isScalarType(type) ? false : undefined;
}

/** Element types holding one value of a known type (not an array): a filter on a single value tells them apart by type alone. */
const SCALAR_TYPES = new Set([0x01, 0x02, 0x03, 0x07, 0x08, 0x09, 0x0a, 0x10, 0x11, 0x12, 0x13]);

export function isScalarType(type: number): boolean {
  return SCALAR_TYPES.has(type);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** One element's value: the common scalar types read directly, the rest by the BSON library. */
function readValue(buf: Buffer, type: number, at: number, elemStart: number, elemEnd: number): unknown {
  switch (type) {
    case 0x01:
      return buf.readDoubleLE(at);
    case 0x02:
      return buf.toString('utf8', at + 4, at + 4 + buf.readInt32LE(at) - 1);
    case 0x08:
      return buf[at] === 1;
    case 0x09:
      return new Date(Number(buf.readBigInt64LE(at)));
    case 0x0a:
      return null;
    case 0x10:
      return buf.readInt32LE(at);
    case 0x12: {
      const v = buf.readBigInt64LE(at);
      if (v <= MAX_SAFE && v >= -MAX_SAFE) return Number(v);
      break; // promoteLongs keeps an unsafe int64 a Long
    }
    default:
      break;
  }
  const one = Buffer.allocUnsafe(5 + elemEnd - elemStart);
  one.writeInt32LE(one.length, 0);
  buf.copy(one, 4, elemStart, elemEnd);
  one[one.length - 1] = 0;
  const doc = deserialize(one, BSON_OPTS);
  for (const k in doc) return doc[k];
  return undefined;
}

/**
 * Serialises `fields` and appends elements whose values are given as BSON bytes (`raw`: name, bytes,
 * and the element type, an embedded document unless said otherwise), in that order: stored documents go
 * into journal records and snapshots without a decode and re-encode.
 */
export function serializeWithRaw(fields: Doc, raw: Array<[string, Uint8Array, number?]>): Uint8Array {
  const head = serialize(fields);
  const names = raw.map(([n]) => Buffer.from(n, 'utf8'));
  let total = head.length;
  raw.forEach(([, bytes], i) => (total += 2 + names[i]!.length + bytes.length));
  const out = Buffer.allocUnsafe(total);
  out.set(head.subarray(0, head.length - 1), 0);
  let w = head.length - 1;
  raw.forEach(([, bytes, type], i) => {
    out[w++] = type ?? 0x03;
    out.set(names[i]!, w);
    w += names[i]!.length;
    out[w++] = 0;
    out.set(bytes, w);
    w += bytes.length;
  });
  out[w] = 0;
  out.writeInt32LE(total, 0);
  return out;
}

/** `{ [name]: [docs...] }` from documents given as BSON bytes (a BSON array is a document keyed "0", "1", ...). */
export function arrayOfRaw(name: string, docs: Uint8Array[]): Uint8Array {
  const array = serializeWithRaw({}, docs.map((d, i): [string, Uint8Array] => [String(i), d]));
  return serializeWithRaw({}, [[name, array, 0x04]]);
}

/**
 * The ops of a journal or snapshot record `{ ops: [op, ...] }` without decoding it: fills `out` with
 * each op's offset in `body` (an op is a document) and returns true, after checking the record's
 * layout (one array field "ops" of documents, every length within the record). False for any other
 * record (a snapshot's meta record), which the caller decodes whole.
 */
export function recordOps(body: Uint8Array, out: number[]): boolean {
  out.length = 0;
  const size = body.length;
  if (size < 5 || int32(body, 0) !== size || body[size - 1] !== 0) return false;
  // 0x04 "ops\0" then the array document, then the record's closing 0x00.
  if (body[4] !== 0x04 || body[5] !== 0x6f || body[6] !== 0x70 || body[7] !== 0x73 || body[8] !== 0) return false;
  const arrayEnd = 9 + int32(body, 9);
  if (arrayEnd !== size - 1 || body[arrayEnd - 1] !== 0) return false;
  let p = 13;
  while (p < arrayEnd - 1) {
    if (body[p++] !== 0x03) return false;
    while (p < arrayEnd && body[p] !== 0) p++;
    p++;
    const len = p + 4 <= arrayEnd ? int32(body, p) : 0;
    if (len < 5 || p + len > arrayEnd - 1 || body[p + len - 1] !== 0) return false;
    out.push(p);
    p += len;
  }
  return p === arrayEnd - 1;
}

/** The last string decoded per field of put ops: a run of puts to one collection decodes its names once. */
const lastNames = { db: ['', Buffer.alloc(0)] as [string, Buffer], c: ['', Buffer.alloc(0)] as [string, Buffer] };

/** The string at [start, end) of `buf`, the cached one when the bytes are the same. */
function cachedString(buf: Buffer, start: number, end: number, last: [string, Buffer]): string {
  const prev = last[1];
  if (prev.length === end - start) {
    let same = true;
    for (let i = 0; i < prev.length && same; i++) same = buf[start + i] === prev[i];
    if (same) return last[0];
  }
  last[0] = buf.toString('utf8', start, end);
  last[1] = Buffer.from(buf.subarray(start, end));
  return last[0];
}

/**
 * A journal put op `{ o: 'put', db, c, doc }` read in one walk, from the document at `offset` of
 * `bytes`: db and c decoded, doc left as bytes (a view). Undefined for any other op (the caller
 * decodes those whole: they hold no documents).
 */
export function readPutOp(bytes: Uint8Array, offset = 0): { o: 'put'; db: string; c: string; doc: Uint8Array } | undefined {
  const buf = asBuffer(bytes);
  const end = offset + int32(buf, offset) - 1;
  let isPut = false;
  let db: string | undefined;
  let c: string | undefined;
  let doc: Uint8Array | undefined;
  let p = offset + 4;
  while (p < end) {
    const type = buf[p++]!;
    const nameStart = p;
    while (buf[p] !== 0) p++;
    const nameLen = p++ - nameStart;
    const size = valueSize(buf, type, p);
    const n0 = buf[nameStart];
    if (type === 0x02 && nameLen === 1 && n0 === 0x6f /* o */) {
      isPut = int32(buf, p) === 4 && buf[p + 4] === 0x70 && buf[p + 5] === 0x75 && buf[p + 6] === 0x74; // "put"
      if (!isPut) return undefined;
    } else if (type === 0x02 && nameLen === 2 && n0 === 0x64 && buf[nameStart + 1] === 0x62 /* db */) {
      db = cachedString(buf, p + 4, p + 4 + int32(buf, p) - 1, lastNames.db);
    } else if (type === 0x02 && nameLen === 1 && n0 === 0x63 /* c */) {
      c = cachedString(buf, p + 4, p + 4 + int32(buf, p) - 1, lastNames.c);
    } else if (type === 0x03 && nameLen === 3 && n0 === 0x64 && buf[nameStart + 1] === 0x6f && buf[nameStart + 2] === 0x63 /* doc */) {
      doc = buf.subarray(p, p + size);
    }
    p += size;
  }
  return isPut && db !== undefined && c !== undefined && doc ? { o: 'put', db, c, doc } : undefined;
}
