import autocannon, { type RequestSpec, type Result } from 'autocannon';
import { randomBytes } from 'node:crypto';
import type { DbCounterReader } from './dbCounters';
import { withCpu } from './processes';
import type { Measure } from './stats';

export interface HttpRow {
  url: string;
  connections: number;
  durationS: number;
  warmupS: number;
  requests: RequestSpec[];
  /** Processes whose CPU time per request is reported (label -> pid). */
  watch?: Record<string, number>;
  /** The database's serverStatus, read before and after the measured run: commands and writes per request. */
  dbCounters?: DbCounterReader;
}

/**
 * One autocannon row: an unrecorded warm-up, then the measured run. Throughput is the mean of
 * autocannon's per-second samples; latencies are its p50/p99 (ms). Non-2xx answers count as errors:
 * a row whose errors are not zero is flagged in the report, since its figures are not the operation's.
 */
export async function runHttpRow(row: HttpRow): Promise<Measure> {
  if (row.warmupS > 0) await autocannon({ url: row.url, connections: row.connections, duration: row.warmupS, requests: row.requests });
  const measured = () =>
    withCpu(row.watch ?? {}, async (): Promise<Result> => autocannon({ url: row.url, connections: row.connections, duration: row.durationS, requests: row.requests }));
  // The readings are outside the CPU window: they cost the database a little, the row nothing.
  const { result: { result, cpu }, counts } = row.dbCounters ? await row.dbCounters.around(measured) : { result: await measured(), counts: undefined };
  const total = Math.max(1, result.requests.total);
  const codes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count}`)
    .join(' ');
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    count: result.requests.total,
    errors: result.errors + result.non2xx,
    note: codes,
    cpuPerOp: Object.fromEntries(Object.entries(cpu).map(([k, ms]) => [k, ms / total])),
    dbPerOp: counts && { commands: counts.commands / total, writes: counts.writes / total },
  };
}

/**
 * A request whose `Idempotency-Key` is new every time (autocannon's setupRequest), so that every
 * POST creates an object instead of replaying the first one.
 */
export function uniqueKeyRequest(spec: { method: string; path: string; headers: Record<string, string>; body: string }): RequestSpec {
  const prefix = `bench-${randomBytes(6).toString('hex')}-`;
  let n = 0;
  return {
    method: spec.method,
    path: spec.path,
    headers: spec.headers,
    body: spec.body,
    setupRequest(req) {
      req.headers = { ...spec.headers, 'idempotency-key': `${prefix}${++n}` };
      return req;
    },
  };
}

/** Requests cycling over `paths` (e.g. GET of many different ids). */
export function rotatingPaths(paths: string[], headers: Record<string, string>): RequestSpec {
  return rotating({ method: 'GET', path: paths[0], headers }, 'path', paths);
}

/** POSTs cycling over `bodies` (e.g. one GraphQL query over many different ids). */
export function rotatingBodies(path: string, bodies: string[], headers: Record<string, string>): RequestSpec {
  return rotating({ method: 'POST', path, headers, body: bodies[0] }, 'body', bodies);
}

function rotating(spec: RequestSpec, part: 'path' | 'body', values: string[]): RequestSpec {
  let i = 0;
  return {
    ...spec,
    setupRequest(req) {
      req[part] = values[i++ % values.length];
      return req;
    },
  };
}
