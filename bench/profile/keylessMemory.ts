/**
 * What work before authentication costs the gateway's memory (issue 54): rounds of 1,000 GraphQL POSTs
 * without a valid key (none, an unknown secret, garbage), each with a different 60 KB document, and 100
 * WebSocket connections doing the same, against the gateway as `npm start` runs it (its node flags,
 * through tsx or, COMPILED=1, its bundle). Prints the gateway's RSS after a warm-up round and after each
 * measured round: the target is less than 50 MiB of growth over the first 1,000 (test/faults/
 * keylessMemory.fault.ts holds it); later rounds show whether anything is retained (the growth of a
 * heap's high-water mark stops, a leak does not).
 *
 *   npx tsx bench/profile/keylessMemory.ts
 *
 * Knobs: ROUNDS (3), HTTP_N (1000), WS_N (100), DOC_BYTES (60000), CONCURRENCY (8), AUTH_WARM_N (0: how
 * many authenticated POSTs of DOC_BYTES to serve before the first reading; they grow the heap's young
 * generation to what serving large requests grows it to, which the flood would otherwise be charged with).
 */
import { createAccount } from '../lib/api';
import { authenticatedLoad, keylessFlood } from '../lib/keylessFlood';
import { killAllChildren, rssBytes } from '../lib/processes';
import { startDatabase, startGatewayProcess } from '../lib/services';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const HTTP_N = Number(process.env.HTTP_N ?? 1_000);
const WS_N = Number(process.env.WS_N ?? 100);
const DOC_BYTES = Number(process.env.DOC_BYTES ?? 60_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const AUTH_WARM_N = Number(process.env.AUTH_WARM_N ?? 0);
const compiled = process.env.COMPILED === '1';
const MiB = 2 ** 20;

async function main(): Promise<void> {
  const db = await startDatabase({ dataDir: '', profile: false, compiled });
  const gateway = await startGatewayProcess({ mongodbUri: db.url, profile: false, name: 'gateway', compiled });
  try {
    const pid = gateway.child.pid;
    const mib = () => (rssBytes(pid) / MiB).toFixed(1);
    console.log(`gateway RSS at start: ${mib()} MiB`);
    const warm = await keylessFlood(gateway.url, { httpCount: 100, wsCount: 10, bytes: DOC_BYTES, concurrency: CONCURRENCY });
    console.log(`after a keyless warm-up (100 HTTP + 10 WS): ${mib()} MiB ${JSON.stringify(warm)}`);
    if (AUTH_WARM_N > 0) {
      const acct = await createAccount(gateway.url, 'keyless memory bench');
      const statuses = await authenticatedLoad(gateway.url, acct.sk, { count: AUTH_WARM_N, bytes: DOC_BYTES, concurrency: CONCURRENCY });
      console.log(`after ${AUTH_WARM_N} authenticated POSTs of ${DOC_BYTES} bytes: ${mib()} MiB ${JSON.stringify(statuses)}`);
    }
    const base = rssBytes(pid);
    for (let round = 1; round <= ROUNDS; round++) {
      const started = Date.now();
      const counts = await keylessFlood(gateway.url, { httpCount: HTTP_N, wsCount: WS_N, bytes: DOC_BYTES, concurrency: CONCURRENCY });
      const growth = (rssBytes(pid) - base) / MiB;
      console.log(`round ${round} (${HTTP_N} HTTP + ${WS_N} WS, ${((Date.now() - started) / 1000).toFixed(1)} s): RSS ${mib()} MiB, growth since warm-up ${growth.toFixed(1)} MiB ${JSON.stringify(counts)}`);
    }
  } finally {
    await gateway.stop();
    await db.stop();
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(killAllChildren);
