import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keylessFlood } from '../../bench/lib/keylessFlood';
import { createAccount } from '../support/accounts';
import { spawnGateway, type GatewayProcess } from '../support/processes';

/**
 * Work before authentication is bounded (issue 54; contract decisions, "Hostile clients at the edge"):
 * 1,000 GraphQL requests without a valid key (none, an unknown secret, garbage), each with a different
 * 60 KB document, over HTTP, and 100 more over WebSocket, grow the gateway's resident memory by less
 * than 50 MiB, and the gateway answers afterwards. Before the fix, 40 such requests took a gateway from
 * 134 to 334 MiB: each document was parsed and kept (some 5–10 MB of heap apiece) before the 401.
 *
 * The gateway is a real child process (src/main.ts, its embedded database in memory); its RSS is read
 * from /proc/<pid>/status. The bound is on memory, not on time.
 */
const RSS_GROWTH_LIMIT_MIB = 50;
const MiB = 2 ** 20;

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await spawnGateway('', { DATA_DIR: '', HTTP_MAX_CONNECTIONS_PER_IP: '1000', WS_MAX_CONNECTIONS_PER_IP: '100' });
});
afterAll(async () => {
  await gateway?.stop();
});

function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

describe('keyless GraphQL requests with distinct 60 KB documents', () => {
  it('grow the gateway by less than 50 MiB, and it still answers', async () => {
    // Warm up with the same mix: the first requests load code and size the heap's young generation.
    const warm = await keylessFlood(gateway.url, { httpCount: 100, wsCount: 10, bytes: 60_000, concurrency: 8 });
    expect(Object.keys(warm.http)).toEqual(['401']);
    const before = rssOf(gateway.pid);
    const counts = await keylessFlood(gateway.url, { httpCount: 1_000, wsCount: 100, bytes: 60_000, concurrency: 8 });
    const after = rssOf(gateway.pid);
    console.log(
      `keyless memory: RSS ${(before / MiB).toFixed(1)} → ${(after / MiB).toFixed(1)} MiB (growth ${((after - before) / MiB).toFixed(1)} MiB); answers ${JSON.stringify(counts)}`,
    );
    // Every request refused as a request without a valid key: 401 over HTTP, 4401 over WebSocket.
    expect(counts.http).toEqual({ 401: 1_000 });
    expect(counts.ws).toEqual({ 4401: 100 });
    expect((after - before) / MiB).toBeLessThan(RSS_GROWTH_LIMIT_MIB);

    expect(gateway.alive()).toBe(true);
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    // An account created without a key, and its key's GraphQL query answered.
    const acct = await createAccount(gateway.url);
    const res = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.sk}` },
      body: JSON.stringify({ query: '{ account { id } }' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { account: { id: string } } }).data.account.id).toBe(acct.id);
  });
});
