/**
 * What a refused GraphQL query costs the gateway (issue 54, "refuse early"): a 50 KB document of aliased
 * `__type` fields, each of which alone would walk the schema up to the cost limit, sent by a secret key
 * one request at a time, and the gateway process's CPU per request (utime + stime of /proc/<pid>/stat,
 * over the whole run, so its 10 ms ticks do not matter). Three rows:
 * - `distinct`: a new document every time (a salt in the aliases): parsed and measured (since the limits
 *   run before validation, a refused document is not validated);
 * - `repeated`: one document sent again and again (what the refusal cache answers, where it exists);
 * - `accepted`: `{ __typename }`, for scale: the whole path of a request that runs.
 *
 *   npx tsx bench/profile/refusedQueryCost.ts          # the gateway through tsx, as the sources say now
 *   COMPILED=1 npx tsx bench/profile/refusedQueryCost.ts   # its bundle (runs `npm run build` first)
 *
 * To compare with another commit: `git archive <rev> | tar -x -C /tmp/before`, link node_modules into
 * it, copy this file there and run it from that directory (bench/README.md, "Refusing a costly GraphQL
 * query").
 *
 * Knobs: DURATION_S (per row, default 8), MIN_REQUESTS (per row, default 20), DOC_BYTES (default 50 000).
 */
import { createAccount } from '../lib/api';
import { cpuMs, killAllChildren } from '../lib/processes';
import { startDatabase, startGatewayProcess } from '../lib/services';
import { percentile } from '../lib/stats';

const DURATION_S = Number(process.env.DURATION_S ?? 8);
const MIN_REQUESTS = Number(process.env.MIN_REQUESTS ?? 20);
const DOC_BYTES = Number(process.env.DOC_BYTES ?? 50_000);
const compiled = process.env.COMPILED === '1';

/**
 * One alias: `Query`'s fields and their types' fields (cost ~410). Two levels of `fields` are the most
 * graphql-js's validation lets through (MaxIntrospectionDepthRule); ~600 of them cost ~250,000.
 */
const ALIAS_BODY = '__type(name:"Query"){fields{name type{fields{name type{name kind ofType{name}}}}}}';

/** About DOC_BYTES of aliased `__type` fields, the aliases salted so that each salt makes a new document. */
function aliasedDocument(salt: string): string {
  const parts: string[] = [];
  let bytes = 2;
  for (let i = 0; bytes < DOC_BYTES; i++) {
    const part = `${salt}${i}:${ALIAS_BODY} `;
    parts.push(part);
    bytes += part.length;
  }
  return `{ ${parts.join('')}}`;
}

const db = await startDatabase({ dataDir: '', profile: false, compiled });
const gw = await startGatewayProcess({ mongodbUri: db.url, profile: false, compiled, name: 'gateway-refused-query' });
try {
  const account = await createAccount(gw.url, 'refused query cost');
  const post = async (query: string) => {
    const res = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as { errors?: Array<{ message: string; extensions?: { code?: string } }> };
    return { status: res.status, error: body.errors?.[0] };
  };

  const rows: Array<[string, (i: number) => string, boolean]> = [
    ['distinct refused 50 KB documents', (i) => aliasedDocument(`d${i + 1}_`), true],
    ['one refused 50 KB document, repeated', () => aliasedDocument('r_'), true],
    ['accepted { __typename }', () => '{ __typename }', false],
  ];
  console.log(`document: ${aliasedDocument('d0_').length} bytes, ${aliasedDocument('d0_').split('__type').length - 1} aliased __type fields`);
  for (const [label, query, refused] of rows) {
    // One request first, outside the figures: the first of its kind loads code and fills caches.
    const first = await post(query(-1));
    if (refused !== (first.status === 400)) throw new Error(`${label}: answered ${first.status} ${JSON.stringify(first.error)}`);
    if (refused) console.log(`  refusal: ${first.status} ${first.error?.extensions?.code}: ${first.error?.message.slice(0, 100)}`);
    const wall: number[] = [];
    const cpuBefore = cpuMs(gw.child.pid);
    const started = performance.now();
    for (let i = 0; wall.length < MIN_REQUESTS || performance.now() - started < DURATION_S * 1000; i++) {
      const t = performance.now();
      const res = await post(query(i));
      wall.push(performance.now() - t);
      if (refused !== (res.status === 400)) throw new Error(`${label}: answered ${res.status}`);
    }
    const cpu = (cpuMs(gw.child.pid) - cpuBefore) / wall.length;
    console.log(`${label.padEnd(40)} ${String(wall.length).padStart(6)} requests  gateway CPU ${cpu.toFixed(2)} ms/req  wall p50 ${percentile(wall, 50).toFixed(2)} ms p95 ${percentile(wall, 95).toFixed(2)} ms`);
  }
} finally {
  await gw.stop();
  await db.stop();
  killAllChildren();
}
