/** Shared types and helpers for command handlers. */
import { Long, calculateObjectSize } from 'bson';
import type { Engine, OpContext } from '../engine';
import { badValue } from '../errors';
import type { Transaction } from '../transactions';
import type { Doc } from '../values';

/** What the server knows about the connection and itself, for hello and friends. */
export interface ServerInfo {
  hostPort: string;
  setName: string;
  processId: unknown;
  connectionId: number;
  /** Resolves after `ms`, or earlier when the server shuts down. */
  sleep(ms: number): Promise<void>;
}

export interface CommandContext {
  engine: Engine;
  db: string;
  cmd: Doc;
  name: string;
  op: OpContext;
  txn: Transaction | undefined;
  server: ServerInfo;
}

export type Handler = (c: CommandContext) => Promise<Doc> | Doc;

export const DEFAULT_BATCH = 101;
/** Leave room under the 16 MB reply limit for the envelope. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024;

export function collectionName(c: CommandContext): string {
  const v = c.cmd[c.name];
  if (typeof v !== 'string' || v.length === 0) throw badValue(`collection name has invalid type ${typeof v}`);
  return v;
}

export function optionalNumber(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Takes up to `max` documents from `docs` starting at `pos`, also bounded by reply size. */
export function takeBatch(docs: Doc[], pos: number, max: number, transform?: (d: Doc) => Doc): { batch: Doc[]; next: number } {
  const batch: Doc[] = [];
  let bytes = 0;
  let i = pos;
  const sized = max > DEFAULT_BATCH;
  for (; i < docs.length && batch.length < max; i++) {
    const d = transform ? transform(docs[i]!) : docs[i]!;
    if (sized) {
      bytes += calculateObjectSize(d);
      if (bytes > MAX_BATCH_BYTES && batch.length > 0) break;
    }
    batch.push(d);
  }
  return { batch, next: i };
}

/** Builds a `{ cursor: { firstBatch, id, ns } }` reply, registering a cursor if more remain. */
export function cursorReply(
  c: CommandContext,
  ns: string,
  docs: Doc[],
  batchSize: number | undefined,
  transform?: (d: Doc) => Doc,
  singleBatch = false,
): Doc {
  const max = batchSize === undefined || batchSize < 0 ? DEFAULT_BATCH : batchSize === 0 ? 0 : batchSize;
  const { batch, next } = takeBatch(docs, 0, singleBatch ? Math.max(docs.length, 1) : max, transform);
  let id = Long.ZERO;
  if (!singleBatch && next < docs.length) {
    id = c.engine.cursors.register({ kind: 'docs', ns, docs, pos: next, transform, lastUsed: Date.now() });
  }
  return { cursor: { firstBatch: batch, id, ns }, ok: 1 };
}
