import WebSocket from 'ws';

/**
 * The JS heap of a child node process, read through its inspector (the child started with
 * `--inspect=127.0.0.1:<port>`): a full collection (`HeapProfiler.collectGarbage`), then
 * `process.memoryUsage().heapUsed` evaluated in its main context. What the heap retains, apart from how
 * far it has grown (RSS). For benchmarks: the gateway has no route for it and needs none.
 */
export interface InspectedHeap {
  heapUsedAfterGc(): Promise<number>;
  close(): void;
}

interface InspectorReply {
  id?: number;
  result?: { result?: { value?: unknown } };
  error?: { message: string };
}

export async function inspectHeap(port: number): Promise<InspectedHeap> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const pending = new Map<number, (reply: InspectorReply) => void>();
  ws.on('message', (data) => {
    const reply = JSON.parse(String(data)) as InspectorReply;
    if (reply.id !== undefined) pending.get(reply.id)?.(reply);
    if (reply.id !== undefined) pending.delete(reply.id);
  });
  let nextId = 0;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<InspectorReply['result']>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, (reply) => (reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result)));
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    async heapUsedAfterGc() {
      await call('HeapProfiler.collectGarbage');
      const result = await call('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
      const value = result?.result?.value;
      if (typeof value !== 'number') throw new Error(`the inspector answered ${JSON.stringify(result)} for heapUsed`);
      return value;
    },
    close: () => ws.close(),
  };
}
