import { CREATE_INTENT_BODY, createAccount, createReferenceIntent } from '../lib/api';
import { rotatingPaths, runHttpRow, uniqueKeyRequest } from '../lib/load';
import { killAllChildren, threadCpuMs } from '../lib/processes';
import { startDatabase, startExpressBaseline, startGatewayProcess, type Service } from '../lib/services';
import { pool } from '../lib/stats';

/**
 * The request rows in both of the gateway's database layouts, in turns on one machine:
 * `npx tsx bench/profile/layouts.ts` (ROUNDS, DURATION_S).
 *
 * - **wire**: the embedded engine in its own process (`npm run db`), the gateway connected over TCP, as
 *   `npm run bench` runs them and as production runs against MongoDB;
 * - **worker**: no MONGODB_URI, memory only: the engine in the gateway's own worker thread, on a Unix
 *   socket, as `npm start` runs out of the box.
 *
 * Each round runs bare Express (the ceiling), then GET by id and POST in each layout, the order reversed
 * every other round, and prints each row's rate and CPU per request; for the worker layout, the CPU of
 * the gateway's busiest threads (its HTTP thread, the engine's worker). The medians at the end give GET
 * as a share of Express and the POSTs' rates, per layout.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DURATION_S = Number(process.env.DURATION_S ?? 5);

const db = await startDatabase({ dataDir: '', profile: false, compiled: true });
const layouts: Array<{ name: string; gw: Service; watch: Record<string, number> }> = [];
const wire = await startGatewayProcess({ mongodbUri: db.url, profile: false, compiled: true, name: 'layout-wire' });
layouts.push({ name: 'wire', gw: wire, watch: { gateway: wire.child.pid, db: db.child.pid } });
// MONGODB_URI empty and DATA_DIR empty: the in-process engine, memory only (src/db/embeddedEngine.ts).
const worker = await startGatewayProcess({ mongodbUri: '', profile: false, compiled: true, name: 'layout-worker', env: { DATA_DIR: '' } });
layouts.push({ name: 'worker', gw: worker, watch: { gateway: worker.child.pid } });
const express = await startExpressBaseline();
try {
  const rows: Array<{ label: string; pid?: number; run: () => ReturnType<typeof runHttpRow> }> = [
    { label: 'express', run: () => runHttpRow({ url: express.url, connections: 50, durationS: DURATION_S, warmupS: 1, requests: [{ method: 'GET', path: '/v1/ping' }], watch: { server: express.child.pid } }) },
  ];
  for (const { name, gw, watch } of layouts) {
    const account = await createAccount(gw.url, `layout ${name}`);
    const auth = { authorization: `Bearer ${account.sk}` };
    const seeded = await pool(Array.from({ length: 200 }, (_, i) => i), 20, async () => (await createReferenceIntent(account.api)).id);
    const post = uniqueKeyRequest({ method: 'POST', path: '/v1/payment_intents', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(CREATE_INTENT_BODY) });
    const pid = name === 'worker' ? gw.child.pid : undefined;
    rows.push({ label: `GET ${name}`, pid, run: () => runHttpRow({ url: gw.url, connections: 50, durationS: DURATION_S, warmupS: 1, requests: [rotatingPaths(seeded.map((id) => `/v1/payment_intents/${id}`), auth)], watch }) });
    rows.push({ label: `POST ${name}`, pid, run: () => runHttpRow({ url: gw.url, connections: 50, durationS: DURATION_S, warmupS: 1, requests: [post], watch }) });
  }
  const rates = new Map<string, number[]>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const row of r % 2 === 0 ? rows : [...rows].reverse()) {
      const before = row.pid ? threadCpuMs(row.pid) : undefined;
      const m = await row.run();
      const requests = m.rps * DURATION_S;
      // The worker layout's threads: the HTTP thread and the engine's worker are the two busiest.
      const threads = before && row.pid
        ? [...threadCpuMs(row.pid)]
            .map(([tid, t]) => (t.ms - (before.get(tid)?.ms ?? 0)) / requests)
            .sort((a, b) => b - a)
            .slice(0, 2)
            .map((ms) => ms.toFixed(3))
            .join(' and ')
        : '';
      const cpu = Object.entries(m.cpuPerOp ?? {}).map(([k, v]) => `${k} ${(v as number).toFixed(3)}`).join(', ');
      console.log(`round ${r + 1} ${row.label.padEnd(12)} ${m.rps.toFixed(0).padStart(6)}/s  CPU ms/req: ${cpu}${threads ? `; busiest threads ${threads}` : ''}${m.errors ? `; ${m.errors} errors` : ''}`);
      rates.set(row.label, [...(rates.get(row.label) ?? []), m.rps]);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ceiling = median(rates.get('express')!);
  console.log(`\nmedians of ${ROUNDS} rounds: bare Express ${ceiling.toFixed(0)}/s`);
  for (const { name } of layouts) {
    const get = median(rates.get(`GET ${name}`)!);
    console.log(`${name.padEnd(7)} GET ${get.toFixed(0)}/s (${((100 * get) / ceiling).toFixed(0)} % of Express), POST ${median(rates.get(`POST ${name}`)!).toFixed(0)}/s`);
  }
} finally {
  await Promise.all([...layouts.map((l) => l.gw.stop()), express.stop()]);
  await db.stop();
  killAllChildren();
}
