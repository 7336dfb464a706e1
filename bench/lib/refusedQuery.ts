import { cpuMs } from './processes';
import { percentile } from './stats';

/**
 * What a refused GraphQL query costs the gateway (issue 54, "refuse early"): a document of aliased
 * `__type` fields, each of which alone would walk the schema up to the cost limit, sent by a secret key
 * one request at a time; the gateway process's CPU per request (utime + stime of /proc/<pid>/stat over
 * the whole row, so its 10 ms ticks do not matter). Used by `npm run bench` (the "Refusals" table) and
 * bench/profile/refusedQueryCost.ts.
 */

/**
 * One alias: `Query`'s fields and their types' fields (cost ~410). Two levels of `fields` are the most
 * graphql-js's validation lets through (MaxIntrospectionDepthRule); ~600 of them cost ~250,000.
 */
const ALIAS_BODY = '__type(name:"Query"){fields{name type{fields{name type{name kind ofType{name}}}}}}';

/**
 * ~150 aliases, ~4,700 tokens: just under MAX_TOKENS (5,000, src/graphql/parseQuery.ts), so the whole document is parsed
 * and the cost walk refuses it (~60,000 of cost), the dearest refusal a new text can get.
 */
const UNDER_TOKENS_BYTES = 14_000;

/** About `bytes` of aliased `__type` fields, the aliases salted so that each salt makes a new document. */
export function aliasedDocument(salt: string, bytes: number): string {
  const parts: string[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const part = `${salt}${i}:${ALIAS_BODY} `;
    parts.push(part);
    size += part.length;
  }
  return `{ ${parts.join('')}}`;
}

export interface RefusalRow {
  label: string;
  requests: number;
  /** Gateway CPU per request, ms. */
  cpuMs: number;
  wallP50: number;
  wallP95: number;
}

export interface RefusalResult {
  docBytes: number;
  /** A new refused document every time: refused where parsing passes MAX_TOKENS (parseQuery.ts). */
  distinct: RefusalRow;
  /** Bytes of the costly documents under the token limit (`underTokens`). */
  underTokensBytes: number;
  /** A new document under the token limit every time: parsed whole, refused by the cost walk. */
  underTokens: RefusalRow;
  /** One document refused on cost, again and again: answered from the refusal cache. */
  repeated: RefusalRow;
  /** `{ __typename }` by the same key: the whole path of a request that runs, for scale. */
  accepted: RefusalRow;
}

export async function measureRefusals(
  gateway: { url: string; pid: number },
  sk: string,
  opts: { durationS: number; minRequests: number; docBytes: number },
  log: (m: string) => void = () => undefined,
): Promise<RefusalResult> {
  const post = async (query: string) => {
    const res = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as { errors?: Array<{ message: string; extensions?: { code?: string } }> };
    return { status: res.status, error: body.errors?.[0] };
  };
  const row = async (label: string, query: (i: number) => string, refused: boolean): Promise<RefusalRow> => {
    // One request first, outside the figures: the first of its kind loads code and fills caches.
    const first = await post(query(-1));
    if (refused !== (first.status === 400)) throw new Error(`${label}: answered ${first.status} ${JSON.stringify(first.error)}`);
    if (refused) log(`  refusal: ${first.status} ${first.error?.extensions?.code}: ${first.error?.message.slice(0, 100)}`);
    const wall: number[] = [];
    const cpuBefore = cpuMs(gateway.pid);
    const started = performance.now();
    for (let i = 0; wall.length < opts.minRequests || performance.now() - started < opts.durationS * 1000; i++) {
      const t = performance.now();
      const res = await post(query(i));
      wall.push(performance.now() - t);
      if (refused !== (res.status === 400)) throw new Error(`${label}: answered ${res.status}`);
    }
    const result = { label, requests: wall.length, cpuMs: (cpuMs(gateway.pid) - cpuBefore) / wall.length, wallP50: percentile(wall, 50), wallP95: percentile(wall, 95) };
    log(`${label.padEnd(40)} ${String(result.requests).padStart(6)} requests  gateway CPU ${result.cpuMs.toFixed(2)} ms/req  wall p50 ${result.wallP50.toFixed(2)} ms p95 ${result.wallP95.toFixed(2)} ms`);
    return result;
  };
  const kb = Math.round(opts.docBytes / 1000);
  return {
    docBytes: aliasedDocument('d0_', opts.docBytes).length,
    distinct: await row(`distinct refused ${kb} KB documents`, (i) => aliasedDocument(`d${i + 1}_`, opts.docBytes), true),
    underTokensBytes: aliasedDocument('t0_', UNDER_TOKENS_BYTES).length,
    underTokens: await row(`distinct ${Math.round(UNDER_TOKENS_BYTES / 1000)} KB documents refused on cost`, (i) => aliasedDocument(`t${i + 1}_`, UNDER_TOKENS_BYTES), true),
    repeated: await row(`one ${Math.round(UNDER_TOKENS_BYTES / 1000)} KB document refused on cost, repeated`, () => aliasedDocument('r_', UNDER_TOKENS_BYTES), true),
    accepted: await row('accepted { __typename }', () => '{ __typename }', false),
  };
}
