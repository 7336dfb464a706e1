import WebSocket from 'ws';

/**
 * A graphql-transport-ws connection driven message by message, for tests that look at what the
 * protocol libraries hide: the HTTP answer to a refused upgrade, close codes, one subscription's error.
 */
export interface RawSocket {
  ws: WebSocket;
  /** The first message of each operation id (next or error), as it arrives. */
  firstMessage(id: string): Promise<{ type: string; payload: any }>;
  /** Every message received, in order. */
  messages: Array<{ id?: string; type: string; payload?: any }>;
  closed: Promise<{ code: number; reason: string }>;
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
}

export type Opened = { ok: true; socket: RawSocket } | { ok: false; status?: number; body?: string; code?: number; reason?: string };

/** Opens a socket and sends connection_init with `key`; resolves at the ack, or with the refusal. */
export function openSocket(baseUrl: string, key: string): Promise<Opened> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: RawSocket['messages'] = [];
  const waiting = new Map<string, (m: { type: string; payload: any }) => void>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const socket: RawSocket = {
    ws,
    messages,
    closed,
    firstMessage: (id) => {
      const seen = messages.find((m) => m.id === id);
      if (seen) return Promise.resolve({ type: seen.type, payload: seen.payload });
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    subscribe: (id, query, variables = {}) => ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } })),
  };
  return new Promise<Opened>((resolve) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ ok: false, status: res.statusCode, body }));
    });
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { id?: string; type: string; payload?: any };
      if (m.type === 'connection_ack') return resolve({ ok: true, socket });
      messages.push(m);
      if (m.id && waiting.has(m.id)) {
        waiting.get(m.id)!({ type: m.type, payload: m.payload });
        waiting.delete(m.id);
      }
    });
    void closed.then(({ code, reason }) => resolve({ ok: false, code, reason }));
    ws.on('error', () => undefined);
  });
}
