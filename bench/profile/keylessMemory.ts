/**
 * What work before authentication costs the gateway's memory (issue 54): floods of GraphQL requests
 * without a valid key (none, an unknown secret, garbage), 1,000 POSTs and 100 WebSocket connections,
 * each with a different 60 KB document, against the gateway as `npm start` runs it (its node flags,
 * through tsx or, COMPILED=1, its bundle). Two gateways, one after the other:
 * - fresh: warmed with 100 + 10 such requests (code loaded), then one flood. Its RSS growth is mostly the
 *   process reaching its working size under 60 MB of bodies (V8's young generation, up to
 *   `--max-semi-space-size=64`; malloc's arenas), which any traffic of that volume causes;
 * - warmed: first the same volume of keyless requests all carrying one identical pair of documents
 *   (keylessFlood.ts, warmUntilFlat), round after round until a round moves the RSS by less than FLAT_MIB;
 *   then ROUNDS floods of distinct documents. The growth over the first is what distinct documents
 *   retain, the target less than 50 MiB (test/faults/keylessMemory.fault.ts holds it); the later rounds
 *   show whether it goes on growing.
 * The RSS is read from `/proc/<pid>/status`. The JS heap used after a full collection is read through
 * the gateway's inspector (`--inspect` on a loopback port; HEAP=0 runs without it), only where the RSS
 * that follows does not matter or is grown back first: a full collection hands back most of the young
 * generation (some 140 MiB of RSS after the warm-up), so the warmed gateway reads its heap after the
 * identical rounds, warms up again until flat, and only then takes the RSS the distinct floods start from.
 *
 *   npx tsx bench/profile/keylessMemory.ts
 *
 * Knobs: ROUNDS (2), HTTP_N (1000), WS_N (100), DOC_BYTES (60000), CONCURRENCY (8), FLAT_MIB (3),
 * WARM_ROUNDS (8, the most identical rounds), HEAP (1), COMPILED (0), FRESH_ONLY (0: 1 skips the warmed gateway).
 */
import { inspectHeap, type InspectedHeap } from '../lib/inspectedHeap';
import { keylessFlood, warmUntilFlat, type FloodCounts } from '../lib/keylessFlood';
import { freePort, killAllChildren, rssBytes } from '../lib/processes';
import { startDatabase, startGatewayProcess, type Service } from '../lib/services';

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const HTTP_N = Number(process.env.HTTP_N ?? 1_000);
const WS_N = Number(process.env.WS_N ?? 100);
const DOC_BYTES = Number(process.env.DOC_BYTES ?? 60_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const FLAT_MIB = Number(process.env.FLAT_MIB ?? 3);
const WARM_ROUNDS = Number(process.env.WARM_ROUNDS ?? 8);
const HEAP = process.env.HEAP !== '0';
const FRESH_ONLY = process.env.FRESH_ONLY === '1';
const compiled = process.env.COMPILED === '1';
const MiB = 2 ** 20;
const flood = { httpCount: HTTP_N, wsCount: WS_N, bytes: DOC_BYTES, concurrency: CONCURRENCY };

interface Gateway {
  service: Service;
  heap?: InspectedHeap;
  rss(): number;
  /** The RSS, then (`heap`) the heap used after a full collection, which shrinks the RSS that follows. */
  reading(heap?: 'heap'): Promise<string>;
}

async function startGateway(mongodbUri: string, name: string): Promise<Gateway> {
  const port = HEAP ? await freePort() : 0;
  const service = await startGatewayProcess({ mongodbUri, profile: false, name, compiled, nodeArgs: HEAP ? [`--inspect=127.0.0.1:${port}`] : [] });
  const heap = HEAP ? await inspectHeap(port) : undefined;
  const rss = () => rssBytes(service.child.pid);
  return {
    service,
    heap,
    rss,
    async reading(withHeap) {
      const line = `RSS ${(rss() / MiB).toFixed(1)} MiB`;
      return heap && withHeap ? `${line}, then heap used after a full GC ${((await heap.heapUsedAfterGc()) / MiB).toFixed(1)} MiB` : line;
    },
  };
}

async function stopGateway(gateway: Gateway): Promise<void> {
  gateway.heap?.close();
  await gateway.service.stop();
}

/** One flood of distinct documents, and the RSS growth it caused over `base`. */
async function distinctRound(gateway: Gateway, label: string, base: number): Promise<void> {
  const started = Date.now();
  const counts = await keylessFlood(gateway.service.url, flood);
  const growth = (gateway.rss() - base) / MiB;
  console.log(`${label} (${HTTP_N} HTTP + ${WS_N} WS, ${((Date.now() - started) / 1000).toFixed(1)} s): RSS growth ${growth.toFixed(1)} MiB; ${await gateway.reading()} ${json(counts)}`);
}

/** Identical rounds until flat (warmUntilFlat), each round's RSS printed. */
async function warmIdentical(gateway: Gateway, label: string): Promise<void> {
  const warm = await warmUntilFlat(gateway.service.url, gateway.rss, {
    ...flood,
    flatBytes: FLAT_MIB * MiB,
    maxRounds: WARM_ROUNDS,
    onRound: (round, rss, counts) => console.log(`  ${label} identical round ${round}: RSS ${(rss / MiB).toFixed(1)} MiB ${json(counts)}`),
  });
  if (!warm.flat) console.log(`  (not flat after ${WARM_ROUNDS} rounds)`);
}

const json = (counts: FloodCounts | Record<string, unknown>) => JSON.stringify(counts);

async function main(): Promise<void> {
  const db = await startDatabase({ dataDir: '', profile: false, compiled });
  try {
    console.log(`fresh gateway: ${HTTP_N} HTTP + ${WS_N} WS keyless requests, each with a distinct ${DOC_BYTES}-byte document`);
    const fresh = await startGateway(db.url, 'gateway-keyless-fresh');
    try {
      // No collection before the flood: this gateway is measured as it is.
      console.log(`  at start: ${await fresh.reading()}`);
      const warm = await keylessFlood(fresh.service.url, { ...flood, httpCount: 100, wsCount: 10 });
      console.log(`  after 100 HTTP + 10 WS: ${await fresh.reading()} ${json(warm)}`);
      await distinctRound(fresh, '  distinct flood', fresh.rss());
      console.log(`  at the end: ${await fresh.reading('heap')}`);
    } finally {
      await stopGateway(fresh);
    }

    if (FRESH_ONLY) return;
    console.log(`warmed gateway: rounds of the same volume, one identical pair of documents, until a round moves RSS < ${FLAT_MIB} MiB`);
    const warmed = await startGateway(db.url, 'gateway-keyless-warmed');
    try {
      console.log(`  at start: ${await warmed.reading('heap')}`);
      await warmIdentical(warmed, 'warm-up');
      if (warmed.heap) {
        console.log(`  after the identical rounds: ${await warmed.reading('heap')}`);
        await warmIdentical(warmed, 'after the collection, again');
      }
      const base = warmed.rss();
      console.log(`  distinct floods start from RSS ${(base / MiB).toFixed(1)} MiB`);
      for (let round = 1; round <= ROUNDS; round++) await distinctRound(warmed, `  distinct flood ${round}`, base);
      console.log(`  at the end: ${await warmed.reading('heap')}`);
    } finally {
      await stopGateway(warmed);
    }
  } finally {
    await db.stop();
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(killAllChildren);
