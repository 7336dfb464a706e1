/**
 * Server-side cursors for find / aggregate / listX results and change streams.
 * Result cursors hold references to immutable stored documents, so later writes never
 * change a batch already in flight. Idle cursors are reaped after 10 minutes (like mongod).
 */
import { Long } from 'bson';
import type { ChangeStreamCursor } from './changeStreams';
import type { Doc } from './values';

export interface ResultCursor {
  kind: 'docs';
  ns: string;
  docs: Doc[];
  pos: number;
  transform: ((d: Doc) => Doc) | undefined;
  lastUsed: number;
}

export interface StreamCursor {
  kind: 'change';
  ns: string;
  stream: ChangeStreamCursor;
  lastUsed: number;
  /** A getMore is waiting for events on this cursor. */
  busy: boolean;
}

export type Cursor = ResultCursor | StreamCursor;

const IDLE_MS = 10 * 60 * 1000;

export class CursorRegistry {
  private cursors = new Map<string, Cursor>();
  private nextId = BigInt(Math.floor(Math.random() * 1e9)) * 1000n + 1n;
  private sweeper: NodeJS.Timeout;

  constructor() {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  register(c: Cursor): Long {
    const id = this.nextId++;
    this.cursors.set(id.toString(), c);
    return Long.fromBigInt(id);
  }

  get(id: unknown): Cursor | undefined {
    const c = this.cursors.get(idKey(id));
    if (c) c.lastUsed = Date.now();
    return c;
  }

  kill(id: unknown): boolean {
    return this.cursors.delete(idKey(id));
  }

  private sweep(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, c] of this.cursors) {
      if (c.lastUsed < cutoff && !(c.kind === 'change' && c.busy)) this.cursors.delete(id);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.cursors.clear();
  }
}

function idKey(id: unknown): string {
  if (Long.isLong(id)) return id.toBigInt().toString();
  if (typeof id === 'bigint') return id.toString();
  if (typeof id === 'number') return BigInt(Math.trunc(id)).toString();
  return String(id);
}
