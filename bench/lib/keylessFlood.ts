import WebSocket from 'ws';

/**
 * Work before authentication (issue 54): GraphQL requests without a valid key, each with a different
 * ~60 KB document, over HTTP POST and over WebSocket. Shared by the fault test that holds the memory
 * bound (test/faults/keylessMemory.fault.ts) and the benchmark that measures it
 * (bench/profile/keylessMemory.ts). Every request must be refused: the counts say how.
 */

export interface FloodCounts {
  /** HTTP answers by status. */
  http: Record<number, number>;
  /** WebSocket close codes. */
  ws: Record<number, number>;
}

let salt = 0;

/**
 * A document never sent before, of about `bytes` characters: many short fields, some 3 characters a
 * token (the most a 60 KB text can cost to parse and keep). `naming` puts the public field's name in
 * it (as a field of a query, where it is not public), so that admission counts and parses it before
 * refusing it.
 */
export function distinctDocument(bytes: number, naming = false): string {
  const n = `${process.pid}_${++salt}`;
  const parts: string[] = naming ? ['createSandboxAccount'] : [];
  for (let length = 0; length < bytes; ) {
    const field = `f${n}_${parts.length}`;
    parts.push(field);
    length += field.length + 1;
  }
  return `{ ${parts.join(' ')} }`;
}

/** The authorizations a flood cycles through: none, a well-formed unknown secret, garbage. */
const AUTHORIZATIONS = [null, 'Bearer sk_test_0000000000000000000000000000', 'Bearer not-a-key'] as const;

/**
 * `httpCount` POSTs and `wsCount` WebSocket connections, `concurrency` at a time, each with a distinct
 * document of `bytes`. One in ten HTTP documents names the public field `createSandboxAccount`.
 */
export async function keylessFlood(baseUrl: string, opts: { httpCount: number; wsCount: number; bytes: number; concurrency: number }): Promise<FloodCounts> {
  const counts: FloodCounts = { http: {}, ws: {} };
  const jobs: Array<() => Promise<void>> = [];
  for (let i = 0; i < opts.httpCount; i++) {
    jobs.push(async () => {
      const authorization = AUTHORIZATIONS[i % AUTHORIZATIONS.length];
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: distinctDocument(opts.bytes, i % 10 === 0) }) });
      await res.arrayBuffer();
      counts.http[res.status] = (counts.http[res.status] ?? 0) + 1;
    });
  }
  for (let i = 0; i < opts.wsCount; i++) {
    jobs.push(async () => {
      const code = await subscribeWithout(baseUrl, i % 2 === 0 ? {} : { authorization: AUTHORIZATIONS[1] }, distinctDocument(opts.bytes));
      counts.ws[code] = (counts.ws[code] ?? 0) + 1;
    });
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
  return counts;
}

/**
 * `count` POSTs by the key `secret`, each with the same ~`bytes` document of aliased `__typename`s:
 * a gateway that has served large requests, its heap's young generation grown to its working size,
 * before the flood is measured (bodies of the flood's size, but authenticated and run).
 */
export async function authenticatedLoad(baseUrl: string, secret: string, opts: { count: number; bytes: number; concurrency: number }): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const aliases: string[] = [];
  for (let length = 0; length < opts.bytes; length += aliases[aliases.length - 1]!.length + 1) aliases.push(`a${aliases.length}: __typename`);
  const body = JSON.stringify({ query: `{ ${aliases.join(' ')} }` });
  let sent = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (sent++ < opts.count) {
        const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` }, body });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

/** connection_init with `params`, a subscribe with `query` at once (before any ack); resolves with the close code. */
export function subscribeWithout(baseUrl: string, params: Record<string, unknown>, query: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('the gateway neither answered nor closed a keyless WebSocket in 30 s'));
    }, 30_000);
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'connection_init', payload: params }));
      ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    });
    ws.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
