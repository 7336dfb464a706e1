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
 * it, copy this file there and run it from that directory (bench/HISTORY.md, "Refusing a costly GraphQL
 * query").
 *
 * Knobs: DURATION_S (per row, default 8), MIN_REQUESTS (per row, default 20), DOC_BYTES (default 50 000).
 */
import { createAccount } from '../lib/api';
import { killAllChildren } from '../lib/processes';
import { aliasedDocument, measureRefusals } from '../lib/refusedQuery';
import { startDatabase, startGatewayProcess } from '../lib/services';

const DURATION_S = Number(process.env.DURATION_S ?? 8);
const MIN_REQUESTS = Number(process.env.MIN_REQUESTS ?? 20);
const DOC_BYTES = Number(process.env.DOC_BYTES ?? 50_000);
const compiled = process.env.COMPILED === '1';

const db = await startDatabase({ dataDir: '', profile: false, compiled });
const gw = await startGatewayProcess({ mongodbUri: db.url, profile: false, compiled, name: 'gateway-refused-query' });
try {
  const account = await createAccount(gw.url, 'refused query cost');
  const sample = aliasedDocument('d0_', DOC_BYTES);
  console.log(`document: ${sample.length} bytes, ${sample.split('__type').length - 1} aliased __type fields`);
  await measureRefusals({ url: gw.url, pid: gw.child.pid }, account.sk, { durationS: DURATION_S, minRequests: MIN_REQUESTS, docBytes: DOC_BYTES }, console.log);
} finally {
  await gw.stop();
  await db.stop();
  killAllChildren();
}
