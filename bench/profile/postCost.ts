import { CREATE_INTENT_BODY, createAccount, createReferenceIntent } from '../lib/api';
import { rotatingPaths, runHttpRow, uniqueKeyRequest } from '../lib/load';
import { killAllChildren } from '../lib/processes';
import { startDatabase, startGatewayProcess, type Service } from '../lib/services';
import { pool } from '../lib/stats';

/**
 * Where a POST's CPU goes, by difference, and A/B comparisons that the machine's drift does not
 * swamp: `npx tsx bench/profile/postCost.ts`.
 *
 * Runs, ROUNDS times in turn, a GET by id, a POST refused by validation (no Idempotency-Key: the same
 * HTTP, auth, rate limit and request log, no payment work) and the real POST, and prints the gateway's
 * and the database's CPU per request (medians). With `AB_ENV='NAME=value ...'` and/or
 * `AB_NODE_ARGS='--flag ...'` a second gateway (B) with those settings runs the same rows against the
 * same database, alternating with A, so that both see the same machine. With `AB_TREE=<checkout>` B
 * runs that checkout's bundle instead (build it there first: `npm run build`), to compare two versions
 * of the code; a `git worktree` with node_modules linked to this one's will do. `ROWS=post` runs only
 * the POST. Both gateways run their bundles (dist/), as `npm start` does.
 */
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DURATION_S = Number(process.env.DURATION_S ?? 6);
const ONLY = new Set((process.env.ROWS ?? '').split(',').filter(Boolean));
const abEnv = Object.fromEntries((process.env.AB_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => kv.split('=', 2) as [string, string]));
const abArgs = (process.env.AB_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const abTree = process.env.AB_TREE;
const withB = Object.keys(abEnv).length > 0 || abArgs.length > 0 || Boolean(abTree);

const db = await startDatabase({ dataDir: '', profile: false, compiled: true });
const gateways: Array<{ name: string; gw: Service }> = [{ name: 'A', gw: await startGatewayProcess({ mongodbUri: db.url, profile: false, compiled: true, name: 'gateway-cost-a' }) }];
if (withB) gateways.push({ name: 'B', gw: await startGatewayProcess({ mongodbUri: db.url, profile: false, compiled: true, tree: abTree, name: 'gateway-cost-b', env: abEnv, nodeArgs: abArgs }) });
try {
  const first = gateways[0]!.gw;
  const account = await createAccount(first.url, 'post cost');
  const auth = { authorization: `Bearer ${account.sk}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const seeded = await pool(Array.from({ length: 100 }, (_, i) => i), 20, async () => (await createReferenceIntent(account.api)).id);
  const body = JSON.stringify(CREATE_INTENT_BODY);
  const rows = Object.entries({
    get: ['GET /payment_intents/{id}', rotatingPaths(seeded.map((id) => `/v1/payment_intents/${id}`), auth)],
    refused: ['POST refused (no Idempotency-Key)', { method: 'POST', path: '/v1/payment_intents', headers: json, body }],
    post: ['POST /payment_intents', uniqueKeyRequest({ method: 'POST', path: '/v1/payment_intents', headers: json, body })],
  } as const).filter(([key]) => ONLY.size === 0 || ONLY.has(key));
  const samples = new Map<string, Array<{ rps: number; gateway: number; db: number }>>();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? gateways : [...gateways].reverse();
    for (const [, [label, request]] of rows) {
      for (const { name, gw } of order) {
        const m = await runHttpRow({ url: gw.url, connections: 50, durationS: DURATION_S, warmupS: 1, requests: [request], watch: { gateway: gw.child.pid, db: db.child.pid } });
        const key = withB ? `${name}: ${label}` : label;
        const list = samples.get(key) ?? [];
        list.push({ rps: m.rps, gateway: m.cpuPerOp?.gateway ?? NaN, db: m.cpuPerOp?.db ?? NaN });
        samples.set(key, list);
        console.log(`round ${r + 1} ${key}: ${m.rps.toFixed(0)}/s, CPU ms/req gateway ${m.cpuPerOp?.gateway?.toFixed(3)} db ${m.cpuPerOp?.db?.toFixed(3)} (${m.note})`);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\nmedians of ${ROUNDS} rounds${withB ? ` (B: ${abTree ?? ''} ${JSON.stringify(abEnv)} ${abArgs.join(' ')})` : ''}:`);
  for (const [label, list] of [...samples].sort((a, b) => a[0].localeCompare(b[0]))) {
    console.log(`${label.padEnd(40)} ${median(list.map((s) => s.rps)).toFixed(0).padStart(6)}/s  gateway ${median(list.map((s) => s.gateway)).toFixed(3)}  db ${median(list.map((s) => s.db)).toFixed(3)} ms/req`);
  }
} finally {
  for (const { gw } of gateways) await gw.stop();
  await db.stop();
  killAllChildren();
}
