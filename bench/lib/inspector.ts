import fs from 'node:fs';
import { WebSocket } from 'ws';
import type { Child } from './processes';

/**
 * The node flag that opens a child's inspector on a free loopback port. The fan-out rows use it for one
 * thing: a full garbage collection before each RSS reading, so that a kind of connection is charged its
 * own memory and not the garbage the kinds before it left (bench/HISTORY.md, "Issue 56: RSS after a GC").
 */
export const INSPECT_FLAG = '--inspect=127.0.0.1:0';

/** The inspector's WebSocket address, from the line node prints on stderr at start (kept in the child's log). */
function inspectorUrl(child: Child): string {
  const m = /Debugger listening on (ws:\/\/\S+)/.exec(fs.readFileSync(child.logFile, 'utf8'));
  if (!m) throw new Error(`${child.name}: no inspector address in ${child.logFile} (started without ${INSPECT_FLAG}?)`);
  return m[1]!;
}

/** Asks the child's V8 for a full, memory-reducing collection and waits until it is done. */
export async function collectGarbage(child: Child): Promise<void> {
  const socket = new WebSocket(inspectorUrl(child));
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${child.name}: HeapProfiler.collectGarbage unanswered`)), 60_000);
      socket.on('message', (data) => {
        if ((JSON.parse(String(data)) as { id?: number }).id !== 1) return;
        clearTimeout(timer);
        resolve();
      });
      socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
  } finally {
    socket.close();
  }
}
