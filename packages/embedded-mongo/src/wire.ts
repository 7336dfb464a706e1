/**
 * MongoDB wire protocol framing: parses OP_MSG (body + kind-1 document sequences) and legacy
 * OP_QUERY (only used for the initial isMaster handshake), and encodes OP_MSG / OP_REPLY
 * replies. Any structural problem throws WireError; the server then drops that connection.
 */
import { deserialize, serializeWithBufferAndIndex } from 'bson';
import { storedBytesOf } from './docStore';
import type { Doc } from './values';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const HEADER_BYTES = 16;

const FLAG_CHECKSUM = 1 << 0;
export const FLAG_MORE_TO_COME = 1 << 1;
const FLAG_EXHAUST_ALLOWED = 1 << 16;
/** Bits 0-15 are "required": unknown ones must make the message an error (OP_MSG spec). */
const KNOWN_REQUIRED = FLAG_CHECKSUM | FLAG_MORE_TO_COME;

export class WireError extends Error {}

const BSON_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;

export interface Header {
  length: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

export type Message =
  | { op: 'msg'; header: Header; flags: number; body: Doc }
  | { op: 'query'; header: Header; collection: string; query: Doc };

function readDoc(buf: Buffer, off: number, end: number): { doc: Doc; next: number } {
  if (off + 5 > end) throw new WireError('truncated BSON document');
  const size = buf.readInt32LE(off);
  if (size < 5 || off + size > end) throw new WireError('BSON document length out of bounds');
  let doc: Doc;
  try {
    doc = deserialize(buf.subarray(off, off + size), BSON_OPTS);
  } catch (e) {
    throw new WireError(`invalid BSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { doc, next: off + size };
}

function readCString(buf: Buffer, off: number, end: number): { value: string; next: number } {
  const zero = buf.indexOf(0, off);
  if (zero < 0 || zero >= end) throw new WireError('unterminated cstring');
  return { value: buf.toString('utf8', off, zero), next: zero + 1 };
}

export function readHeader(buf: Buffer): Header {
  return {
    length: buf.readInt32LE(0),
    requestId: buf.readInt32LE(4),
    responseTo: buf.readInt32LE(8),
    opCode: buf.readInt32LE(12),
  };
}

/** Parses one complete message (buf.length === header.length). */
export function parseMessage(buf: Buffer): Message {
  const header = readHeader(buf);
  if (header.opCode === OP_MSG) return parseOpMsg(buf, header);
  if (header.opCode === OP_QUERY) return parseOpQuery(buf, header);
  if (header.opCode === OP_COMPRESSED) throw new WireError('compression was not negotiated');
  throw new WireError(`unsupported opCode ${header.opCode}`);
}

function parseOpMsg(buf: Buffer, header: Header): Message {
  if (buf.length < HEADER_BYTES + 5) throw new WireError('OP_MSG too short');
  const flags = buf.readUInt32LE(HEADER_BYTES);
  if ((flags & 0xffff & ~KNOWN_REQUIRED) !== 0) throw new WireError(`unknown required OP_MSG flags ${flags}`);
  const end = buf.length - (flags & FLAG_CHECKSUM ? 4 : 0);
  let off = HEADER_BYTES + 4;
  let body: Doc | undefined;
  const sequences: Array<[string, Doc[]]> = [];
  while (off < end) {
    const kind = buf[off++];
    if (kind === 0) {
      if (body) throw new WireError('OP_MSG with more than one body section');
      const r = readDoc(buf, off, end);
      body = r.doc;
      off = r.next;
    } else if (kind === 1) {
      if (off + 4 > end) throw new WireError('truncated document sequence');
      const size = buf.readInt32LE(off);
      const secEnd = off + size;
      if (size < 5 || secEnd > end) throw new WireError('document sequence length out of bounds');
      const id = readCString(buf, off + 4, secEnd);
      off = id.next;
      const docs: Doc[] = [];
      while (off < secEnd) {
        const r = readDoc(buf, off, secEnd);
        docs.push(r.doc);
        off = r.next;
      }
      sequences.push([id.value, docs]);
    } else throw new WireError(`unknown OP_MSG section kind ${String(kind)}`);
  }
  if (!body) throw new WireError('OP_MSG without a body section');
  for (const [id, docs] of sequences) {
    const existing = body[id];
    body[id] = Array.isArray(existing) ? [...existing, ...docs] : docs;
  }
  return { op: 'msg', header, flags, body };
}

function parseOpQuery(buf: Buffer, header: Header): Message {
  const end = buf.length;
  let off = HEADER_BYTES + 4; // flags
  const coll = readCString(buf, off, end);
  off = coll.next + 8; // numberToSkip, numberToReturn
  if (off > end) throw new WireError('truncated OP_QUERY');
  const q = readDoc(buf, off, end);
  let query = q.doc;
  // Legacy wrapping: { $query: {...}, $readPreference: ... }
  if (query.$query && typeof query.$query === 'object') query = query.$query as Doc;
  return { op: 'query', header, collection: coll.value, query };
}

let nextRequestId = 1;

/**
 * Replies are serialised straight after their header in one scratch buffer and copied out once
 * (bson.serialize would serialise into its own scratch buffer, copy, and we would copy again).
 * Sized for a maximal 16 MB document plus envelope.
 */
const scratch = Buffer.alloc(17 * 1024 * 1024 + 64);

function encode(opCode: number, headerExtra: number, responseTo: number, doc: Doc, writeExtra: (b: Buffer) => void): Buffer {
  const start = HEADER_BYTES + headerExtra;
  const batch = storedBatch(doc);
  const end = (batch ? writeWithStoredBatch(doc, batch, scratch, start) : serializeWithBufferAndIndex(doc, scratch, { index: start })) + 1;
  writeExtra(scratch);
  scratch.writeInt32LE(end, 0);
  scratch.writeInt32LE(nextRequestId++ & 0x7fffffff, 4);
  scratch.writeInt32LE(responseTo, 8);
  scratch.writeInt32LE(opCode, 12);
  return Buffer.from(scratch.subarray(0, end));
}

interface StoredBatch {
  cursor: Doc;
  key: 'firstBatch' | 'nextBatch';
  batch: Doc[];
}

/** A cursor reply's batch, when some of its documents are stored versions whose bytes can be copied. */
function storedBatch(doc: Doc): StoredBatch | undefined {
  const cursor = doc.cursor as Doc | undefined;
  if (!cursor || typeof cursor !== 'object') return undefined;
  const key = Array.isArray(cursor.firstBatch) ? 'firstBatch' : Array.isArray(cursor.nextBatch) ? 'nextBatch' : undefined;
  if (!key) return undefined;
  const batch = cursor[key] as Doc[];
  for (const d of batch) if (storedBytesOf(d)) return { cursor, key, batch };
  return undefined;
}

/**
 * Serialises a cursor reply whose batch holds stored documents: each is copied as its stored bytes
 * (what bson would write for it, since the stored bytes are its encoding) instead of encoded again; the
 * rest of the reply is serialised as usual. Field order differs (cursor last, its batch last), which
 * BSON readers do not care about. Returns the index of the last byte written, as
 * serializeWithBufferAndIndex does.
 */
function writeWithStoredBatch(doc: Doc, sb: StoredBatch, buf: Buffer, start: number): number {
  const { cursor: _cursor, ...rest } = doc;
  const { [sb.key]: _batch, ...cursorFields } = sb.cursor;
  let p = serializeWithBufferAndIndex(rest, buf, { index: start }); // at its terminating 0
  buf[p++] = 0x03;
  p += buf.write('cursor\0', p, 'latin1');
  const cursorStart = p;
  p = serializeWithBufferAndIndex(cursorFields, buf, { index: p });
  buf[p++] = 0x04;
  p += buf.write(`${sb.key}\0`, p, 'latin1');
  const arrayStart = p;
  p += 4;
  sb.batch.forEach((d, i) => {
    buf[p++] = 0x03;
    p += buf.write(`${i}\0`, p, 'latin1');
    const stored = storedBytesOf(d);
    if (stored) {
      buf.set(stored, p);
      p += stored.length;
    } else p = serializeWithBufferAndIndex(d, buf, { index: p }) + 1;
  });
  buf[p++] = 0;
  buf.writeInt32LE(p - arrayStart, arrayStart);
  buf[p++] = 0;
  buf.writeInt32LE(p - cursorStart, cursorStart);
  buf[p++] = 0;
  buf.writeInt32LE(p - start, start);
  return p - 1;
}

export function encodeOpMsg(responseTo: number, doc: Doc, flags = 0): Buffer {
  return encode(OP_MSG, 5, responseTo, doc, (b) => {
    b.writeUInt32LE(flags, 16);
    b[20] = 0; // section kind 0: body
  });
}

export function encodeOpReply(responseTo: number, doc: Doc): Buffer {
  return encode(OP_REPLY, 20, responseTo, doc, (b) => {
    b.writeInt32LE(0, 16); // responseFlags
    b.writeBigInt64LE(0n, 20); // cursorID
    b.writeInt32LE(0, 28); // startingFrom
    b.writeInt32LE(1, 32); // numberReturned
  });
}

export { FLAG_EXHAUST_ALLOWED };
