/**
 * Index entries as single strings that sort, by plain string comparison, exactly as their key tuples
 * sort by `compareValues` (MongoDB's cross-type order), each component in its index direction, then
 * by document id: one flat string per entry, and comparing two entries is one native string comparison
 * (see docs/decisions/0007-engine-data-as-bytes.md).
 *
 * Layout: [component]... [document id] [id length: 2 chars]. A component is a type byte (the BSON type's
 * rank in the comparison order) and a payload that sorts like the values of that type:
 *   numbers, Dates  the IEEE-754 double, big-endian, sign bit flipped (all bits when negative); NaN as
 *                   zeros, before every number; -0 as 0. Longs and Decimal128 go through the double,
 *                   as compareValues compares them.
 *   strings         UTF-16 code units, 0x00 and 0x01 escaped (0x01 0x01, 0x01 0x02), units >= 0xFF as
 *                   0xFF hi lo; then 0x00, which sorts before any unit: "a" < "ab".
 *   objects         per field: value's type byte, name (as a string), value's payload; then 0x00.
 *   arrays          each element as a component; then 0x00.
 *   ObjectId        its 12 bytes. Binary: length (4 bytes), subtype, bytes. Timestamp: t, i (4 bytes each).
 *   booleans        0 or 1. null/missing, MinKey, MaxKey: the type byte alone.
 * Every component is a prefix-free code, so a tuple's encoding is too: the entries whose first m
 * components equal a prefix are exactly those that start with the prefix's encoding, and they are
 * contiguous. A descending component is the same code with every byte complemented (255 - b), which
 * reverses the order of a prefix-free code. The key part only uses bytes 0-255 (a one-byte string in
 * V8); the id follows as is, and its length, at the end, says where it starts.
 */
import type { Binary, ObjectId, Timestamp } from 'bson';
import { toNumber, typeRank, type Doc } from './values';

interface Latin1Buffer extends Buffer {
  latin1Slice(start: number, end: number): string;
  latin1Write(s: string, offset: number): number;
}

/** Scratch space the encoder writes into; grown when a key needs more. */
let buf = Buffer.allocUnsafe(1024) as Latin1Buffer;
let n = 0;

function ensure(extra: number): void {
  if (n + extra <= buf.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, n + extra)) as Latin1Buffer;
  buf.copy(bigger, 0, 0, n);
  buf = bigger;
}

function writeDouble(x: number): void {
  ensure(8);
  if (x !== x) {
    buf.fill(0, n, n + 8);
  } else {
    buf.writeDoubleBE(x === 0 ? 0 : x, n);
    if (buf[n]! & 0x80) for (let i = n; i < n + 8; i++) buf[i] = 255 - buf[i]!;
    else buf[n] = buf[n]! ^ 0x80;
  }
  n += 8;
}

function writeString(s: string): void {
  ensure(3 * s.length + 1);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 2 && c < 0xff) buf[n++] = c;
    else if (c < 2) {
      buf[n++] = 1;
      buf[n++] = c + 1;
    } else {
      buf[n++] = 0xff;
      buf[n++] = c >>> 8;
      buf[n++] = c & 0xff;
    }
  }
  buf[n++] = 0;
}

function writeBytes(bytes: Uint8Array): void {
  ensure(bytes.length);
  buf.set(bytes, n);
  n += bytes.length;
}

function writeUint32(x: number): void {
  ensure(4);
  buf.writeUInt32BE(x >>> 0, n);
  n += 4;
}

function writeValue(v: unknown): void {
  // The common key components first: strings and numbers.
  if (typeof v === 'string') {
    ensure(1);
    buf[n++] = 4;
    writeString(v);
    return;
  }
  const rank = typeRank(v);
  ensure(1);
  buf[n++] = rank;
  writePayload(v, rank);
}

function writePayload(v: unknown, rank: number): void {
  switch (rank) {
    case 3:
      writeDouble(typeof v === 'number' ? v : toNumber(v));
      return;
    case 4:
      writeString(String(v));
      return;
    case 5: {
      const obj = v as Doc;
      for (const k of Object.keys(obj)) {
        const x = obj[k];
        const r = typeRank(x);
        ensure(1);
        buf[n++] = r;
        writeString(k);
        writePayload(x, r);
      }
      ensure(1);
      buf[n++] = 0;
      return;
    }
    case 6:
      for (const x of v as unknown[]) writeValue(x);
      ensure(1);
      buf[n++] = 0;
      return;
    case 7: {
      const bytes = v instanceof Uint8Array ? v : (v as Binary).buffer;
      writeUint32(bytes.length);
      ensure(1);
      buf[n++] = v instanceof Uint8Array ? 0 : (v as Binary).sub_type;
      writeBytes(bytes);
      return;
    }
    case 8:
      writeBytes((v as ObjectId).id);
      return;
    case 9:
      ensure(1);
      buf[n++] = v ? 1 : 0;
      return;
    case 10:
      writeDouble((v as Date).getTime());
      return;
    case 11:
      writeUint32((v as Timestamp).t);
      writeUint32((v as Timestamp).i);
      return;
    case 12: {
      const r = v as { source?: string; flags?: string; pattern?: string; options?: string };
      writeString(r.source ?? r.pattern ?? '');
      writeString(r.flags ?? r.options ?? '');
      return;
    }
    default:
      // MinKey, null/missing, MaxKey and values outside BSON: the type alone (compareValues: all equal).
      return;
  }
}

/** Writes the first `len` components of `tuple` into the scratch buffer, from its start. */
function writeKey(tuple: unknown[], dirs: number[], len: number): void {
  n = 0;
  for (let i = 0; i < len; i++) {
    const start = n;
    writeValue(tuple[i]);
    if (dirs[i] === -1) for (let j = start; j < n; j++) buf[j] = 255 - buf[j]!;
  }
}

/** The encoding of the first `len` components of a key tuple: what entries with that prefix start with. */
export function encodeKey(tuple: unknown[], dirs: number[], len = tuple.length): string {
  writeKey(tuple, dirs, len);
  return buf.latin1Slice(0, n);
}

/** The entry of document `id` under key tuple `tuple`. */
export function encodeEntry(tuple: unknown[], dirs: number[], id: string): string {
  writeKey(tuple, dirs, tuple.length);
  return appendId(id);
}

/** encodeEntry when the key has just been encoded by encodeKey (unique indexes need both). */
export function entryAfterKey(key: string, id: string): string {
  // The scratch buffer may have been used since: write the key again (a copy, no encoding).
  n = 0;
  ensure(key.length);
  n = buf.latin1Write(key, 0);
  return appendId(id);
}

function appendId(id: string): string {
  const len = id.length;
  ensure(len + 2);
  for (let i = 0; i < len; i++) {
    const c = id.charCodeAt(i);
    if (c > 0xff) return buf.latin1Slice(0, n) + id + idLength(len); // rare: a two-byte string
    buf[n + i] = c;
  }
  n += len;
  buf[n++] = 0; // len < 65536: its high char
  if (len > 0xff) return buf.latin1Slice(0, n - 1) + idLength(len);
  buf[n++] = len;
  return buf.latin1Slice(0, n);
}

function idLength(len: number): string {
  return String.fromCharCode(len >>> 16, len & 0xffff);
}

/** The document id of an entry. */
export function idOf(entry: string): string {
  const end = entry.length - 2;
  const len = entry.charCodeAt(end) * 0x10000 + entry.charCodeAt(end + 1);
  return entry.slice(end - len, end);
}

/** The key part of an entry (what encodeKey gives for its whole tuple). */
export function keyOf(entry: string): string {
  const end = entry.length - 2;
  const len = entry.charCodeAt(end) * 0x10000 + entry.charCodeAt(end + 1);
  return entry.slice(0, end - len);
}

/** Dates beyond this many ms from the epoch are invalid (new Date gives NaN): ECMAScript's TimeClip. */
const MAX_DATE_MS = 8.64e15;

/**
 * Start-up's index builds: the entry of document `id` encoded straight from its BSON bytes, without
 * decoding its values into strings, numbers and Dates first (a quarter of a start-up's CPU went to
 * making and collecting those). `at[i]` is the offset in `buf` of the element (its type byte) of the
 * index's i-th key component (i < dirs.length), or -1 when the document lacks it. Gives exactly what
 * encodeEntry gives for the decoded values, or null when a sparse index holds no entry for the
 * document, or undefined when a value is of a type not read here (arrays, subdocuments, ObjectIds, a
 * Long beyond 2^53...): the caller then decodes the fields and uses keysFor and encodeEntry.
 */
export function encodeEntryFromBson(src: Buffer, at: Int32Array, dirs: number[], sparse: boolean, id: string): string | null | undefined {
  n = 0;
  let missing = 0;
  for (let i = 0; i < dirs.length; i++) {
    const start = n;
    const el = at[i]!;
    if (el < 0) {
      missing++;
      ensure(1);
      buf[n++] = 2; // null/missing
    } else if (!writeBsonValue(src, el)) return undefined;
    if (dirs[i] === -1) for (let j = start; j < n; j++) buf[j] = 255 - buf[j]!;
  }
  if (sparse && missing === dirs.length) return null;
  return appendId(id);
}

/** One component from the element at `el` (type byte, name, value); false when its type is not read here. */
function writeBsonValue(src: Buffer, el: number): boolean {
  const type = src[el]!;
  let v = el + 1;
  while (src[v] !== 0) v++;
  v++;
  ensure(1);
  switch (type) {
    case 0x02: {
      buf[n++] = 4;
      const end = v + 4 + src.readInt32LE(v) - 1;
      ensure(3 * (end - v) + 1);
      // ASCII is copied as writeString would write its UTF-16 units; anything else is decoded first.
      for (let p = v + 4; p < end; p++) {
        const c = src[p]!;
        if (c >= 2 && c < 0x80) buf[n++] = c;
        else if (c < 2) {
          buf[n++] = 1;
          buf[n++] = c + 1;
        } else {
          n = n - (p - v - 4) - countEscapes(src, v + 4, p);
          writeString(src.toString('utf8', v + 4, end));
          return true;
        }
      }
      buf[n++] = 0;
      return true;
    }
    case 0x01:
      buf[n++] = 3;
      writeDouble(src.readDoubleLE(v));
      return true;
    case 0x10:
      buf[n++] = 3;
      writeDouble(src.readInt32LE(v));
      return true;
    case 0x12: {
      const x = Number(src.readBigInt64LE(v));
      if (!Number.isSafeInteger(x)) return false; // a Long: left to the decoding path
      buf[n++] = 3;
      writeDouble(x);
      return true;
    }
    case 0x09: {
      const ms = Number(src.readBigInt64LE(v));
      buf[n++] = 10;
      writeDouble(Math.abs(ms) > MAX_DATE_MS ? NaN : ms);
      return true;
    }
    case 0x08:
      buf[n++] = 9;
      buf[n++] = src[v] === 1 ? 1 : 0;
      return true;
    case 0x0a:
      buf[n++] = 2;
      return true;
    default:
      return false;
  }
}

/** Bytes 0x00 and 0x01 in [from, to): each took two bytes of the encoding. */
function countEscapes(src: Buffer, from: number, to: number): number {
  let k = 0;
  for (let p = from; p < to; p++) if (src[p]! < 2) k++;
  return k;
}
