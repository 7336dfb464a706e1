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

/** The two documents of a flood whose requests all carry the same ones (see keylessFlood's `documents`). */
export interface FixedDocuments {
  plain: string;
  naming: string;
}

export function fixedDocuments(bytes: number): FixedDocuments {
  return { plain: distinctDocument(bytes), naming: distinctDocument(bytes, true) };
}

export interface FloodOptions {
  httpCount: number;
  wsCount: number;
  bytes: number;
  concurrency: number;
  /** Every request carries these instead of a document of its own: the same volume, nothing distinct. */
  documents?: FixedDocuments;
}

/**
 * `httpCount` POSTs and `wsCount` WebSocket connections, `concurrency` at a time, each with a distinct
 * document of `bytes` (or the same `documents`). One in ten HTTP documents names the public field
 * `createSandboxAccount`.
 */
export async function keylessFlood(baseUrl: string, opts: FloodOptions): Promise<FloodCounts> {
  const counts: FloodCounts = { http: {}, ws: {} };
  const document = (naming: boolean) => (opts.documents ? opts.documents[naming ? 'naming' : 'plain'] : distinctDocument(opts.bytes, naming));
  const jobs: Array<() => Promise<void>> = [];
  for (let i = 0; i < opts.httpCount; i++) {
    jobs.push(async () => {
      const authorization = AUTHORIZATIONS[i % AUTHORIZATIONS.length];
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: document(i % 10 === 0) }) });
      await res.arrayBuffer();
      counts.http[res.status] = (counts.http[res.status] ?? 0) + 1;
    });
  }
  for (let i = 0; i < opts.wsCount; i++) {
    jobs.push(async () => {
      const code = await subscribeWithout(baseUrl, i % 2 === 0 ? {} : { authorization: AUTHORIZATIONS[1] }, document(false));
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
 * Warms a fresh gateway with the volume of the measured flood, minus its distinctness: rounds of the
 * same mix of keyless requests, all carrying one fixed pair of documents, until a round moves the RSS
 * by less than `flatBytes` (or `maxRounds` have run). A fresh process's RSS grows under any traffic of
 * 60 MB of bodies (V8's young generation and malloc's arenas reaching their working size); after this,
 * what a flood of distinct documents adds is what their distinctness costs. `rss` reads the gateway's.
 */
export async function warmUntilFlat(
  baseUrl: string,
  rss: () => number,
  opts: Omit<FloodOptions, 'documents'> & { flatBytes: number; maxRounds: number; onRound?: (round: number, rssBytes: number, counts: FloodCounts) => void },
): Promise<{ rounds: number; flat: boolean }> {
  const documents = fixedDocuments(opts.bytes);
  let before = rss();
  for (let round = 1; round <= opts.maxRounds; round++) {
    const counts = await keylessFlood(baseUrl, { ...opts, documents });
    const after = rss();
    opts.onRound?.(round, after, counts);
    if (Math.abs(after - before) < opts.flatBytes) return { rounds: round, flat: true };
    before = after;
  }
  return { rounds: opts.maxRounds, flat: false };
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
