import type { ChildProcess } from 'node:child_process';
import { createAccount, createReferenceIntent } from '../lib/api';
import { runHttpRow, rotatingPaths } from '../lib/load';
import { collectGarbage } from '../lib/inspector';
import { forkTs, rssBytes } from '../lib/processes';
import type { Service } from '../lib/services';
import type { BenchSettings } from '../lib/settings';
import { percentile, pool, sleep } from '../lib/stats';
import type { ParentMessage, SubscriberKind, TriggerResult, WorkerMessage } from './protocol';

export interface LatencySummary {
  p50: number;
  p99: number;
  received: number;
  missed: number;
}

/** One kind of subscriber in a fan-out row. */
export interface FanoutKind {
  kind: SubscriberKind;
  open: number;
  latency: LatencySummary;
  /** Gateway RSS once this kind's subscribers were connected too (they are connected one kind after another). */
  rssAfter: number;
  /** Bytes of gateway RSS per 1,000 subscribers of this kind (its growth over the kind before it). */
  perThousand: number;
}

export interface FanoutResult {
  payments: number;
  connectFailures: string[];
  kinds: FanoutKind[];
  all: LatencySummary & { open: number };
  trigger: { p50: number; p99: number; errors: number };
  /** From the intent's `updated_at` (the state change) to receipt: the fan-out part of the latency. */
  sinceChange: { p50: number; p99: number };
  /** Gateway RSS before any subscriber (after the warm-up GETs). */
  rssBefore: number;
  /** Bytes of gateway RSS per 1,000 connections, every kind together. */
  perThousandAll: number;
  ratePerSecond: number;
}

/** What the report calls each kind. */
export const KIND_LABEL: Record<SubscriberKind, string> = {
  sse: 'SSE `GET /v1/payment_intents/{id}/events`',
  ws: 'graphql-ws `paymentIntentUpdated(id)`',
  graphqlSse: 'GraphQL over SSE (graphql-sse) on `POST /graphql`',
  multipart: 'Apollo multipart subscription on `POST /graphql`',
};

/** Spawns one client process and gives it typed send/expect helpers. */
function worker(): { proc: ChildProcess; send(m: ParentMessage): void; next<T extends WorkerMessage['type']>(type: T, timeoutMs: number): Promise<Extract<WorkerMessage, { type: T }>> } {
  const proc = forkTs('bench/fanout/worker.ts');
  const inbox: WorkerMessage[] = [];
  const waiters: Array<(m: WorkerMessage) => boolean> = [];
  proc.on('message', (m: WorkerMessage) => {
    if (m.type === 'error') console.error(`fan-out worker ${proc.pid}: ${m.message}`);
    const i = waiters.findIndex((w) => w(m));
    if (i >= 0) waiters.splice(i, 1);
    else inbox.push(m);
  });
  return {
    proc,
    send: (m) => proc.send(m),
    next(type, timeoutMs) {
      return new Promise((resolve, reject) => {
        const queued = inbox.findIndex((m) => m.type === type);
        if (queued >= 0) {
          resolve(inbox.splice(queued, 1)[0] as never);
          return;
        }
        const timer = setTimeout(() => reject(new Error(`fan-out worker ${proc.pid}: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
        const onExit = (code: number | null) => reject(new Error(`fan-out worker ${proc.pid} exited (${code}) while waiting for '${type}'`));
        proc.once('exit', onExit);
        waiters.push((m) => {
          if (m.type !== type) return false;
          clearTimeout(timer);
          proc.off('exit', onExit);
          resolve(m as never);
          return true;
        });
      });
    },
  };
}

function summarizeLatencies(samples: number[], missed: number): LatencySummary {
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), received: samples.length, missed };
}

/** Seconds of GET load before the first RSS reading. */
const WARM_S = 5;

/**
 * Reads RSS after the gateway has been idle for a moment (settled buffers, timers) and has run a full
 * collection: without it, a kind was charged the garbage of the kinds before it, and the same kind
 * measured 10.8 MiB per 1,000 first and 19.4 MiB last (bench/HISTORY.md, "Issue 56: RSS after a GC").
 */
async function settledRss(gw: Service): Promise<number> {
  await sleep(2_000);
  await collectGarbage(gw.child);
  await sleep(500);
  return rssBytes(gw.child.pid);
}

/**
 * Live fan-out on ONE gateway process: `subscribers` subscribers of each of `kinds`, spread over
 * `fanoutPayments` reference payments (which stay PENDING: no rail timers), held by `fanoutWorkers`
 * client processes and connected one kind after another (the RSS read after each gives its cost). Then
 * each payment is cancelled in turn at `fanoutRate` per second, and every subscriber's delay from the
 * cancel request to its cancellation is kept.
 */
export async function runFanout(gw: Service, s: BenchSettings, kinds: readonly SubscriberKind[], log: (m: string) => void): Promise<FanoutResult> {
  const account = await createAccount(gw.url, 'bench fan-out');
  const payments = await pool(
    Array.from({ length: s.fanoutPayments }, (_, i) => i),
    20,
    async () => (await createReferenceIntent(account.api)).id,
  );
  const perPayment = Math.max(1, Math.round(s.subscribers / payments.length));
  const workers = Array.from({ length: Math.min(s.fanoutWorkers, payments.length) }, () => worker());
  try {
    workers.forEach((w, i) => w.send({ type: 'init', gatewayUrl: gw.url, sk: account.sk, payments: payments.filter((_, j) => j % workers.length === i) }));
    await Promise.all(workers.map((w) => w.next('ready', 30_000)));
    const parallel = Math.max(1, Math.floor(64 / workers.length));
    const failures: string[] = [];
    const connectAll = async (kind: SubscriberKind) => {
      const t0 = performance.now();
      workers.forEach((w) => w.send({ type: 'connect', kind, perPayment, parallel }));
      const replies = await Promise.all(workers.map((w) => w.next('connected', 600_000)));
      for (const r of replies) if (r.failed) failures.push(`${kind}: ${r.failed} failed (${r.firstError})`);
      const open = replies.reduce((n, r) => n + r.open, 0);
      log(`  ${open} ${kind} subscribers connected in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      return open;
    };

    // A gateway holding connections has served requests: 5 s of GETs first grow V8's young generation to
    // its maximum (--max-semi-space-size, as any load does), so that this one-time growth is not charged
    // to the first kind of connection measured (bench/HISTORY.md, Round 18).
    const auth = { authorization: `Bearer ${account.sk}` };
    await runHttpRow({ url: gw.url, connections: 50, durationS: WARM_S, warmupS: 0, requests: [rotatingPaths(payments.map((id) => `/v1/payment_intents/${id}`), auth)] });
    const rssBefore = await settledRss(gw);
    const connected: Array<{ kind: SubscriberKind; open: number; rssAfter: number }> = [];
    for (const kind of kinds) {
      const open = await connectAll(kind);
      connected.push({ kind, open, rssAfter: await settledRss(gw) });
    }

    const globalInterval = 1000 / s.fanoutRate;
    const intervalMs = globalInterval * workers.length;
    const timeoutMs = 30_000;
    workers.forEach((w, i) => w.send({ type: 'trigger', offsetMs: i * globalInterval, intervalMs, timeoutMs }));
    const results: TriggerResult[] = await Promise.all(workers.map((w) => w.next('result', payments.length * intervalMs + timeoutMs + 30_000)));
    const trig = results.flatMap((r) => r.trigger);
    const since = results.flatMap((r) => r.sinceChange);
    const kindResults = connected.map(({ kind, open, rssAfter }, i) => {
      const grown = rssAfter - (i === 0 ? rssBefore : connected[i - 1]!.rssAfter);
      const latency = summarizeLatencies(
        results.flatMap((r) => r.latencies[kind]),
        results.reduce((n, r) => n + r.missed[kind], 0),
      );
      return { kind, open, latency, rssAfter, perThousand: open ? (grown / open) * 1000 : NaN };
    });
    const open = kindResults.reduce((n, k) => n + k.open, 0);
    const last = connected.at(-1)?.rssAfter ?? rssBefore;
    return {
      payments: payments.length,
      connectFailures: failures,
      kinds: kindResults,
      all: {
        ...summarizeLatencies(
          results.flatMap((r) => kinds.flatMap((k) => r.latencies[k])),
          kindResults.reduce((n, k) => n + k.latency.missed, 0),
        ),
        open,
      },
      trigger: { p50: percentile(trig, 50), p99: percentile(trig, 99), errors: results.reduce((n, r) => n + r.triggerErrors, 0) },
      sinceChange: { p50: percentile(since, 50), p99: percentile(since, 99) },
      rssBefore,
      perThousandAll: open ? ((last - rssBefore) / open) * 1000 : NaN,
      ratePerSecond: s.fanoutRate,
    };
  } finally {
    for (const w of workers) w.send({ type: 'close' });
    await Promise.all(workers.map((w) => (w.proc.exitCode === null ? new Promise((r) => w.proc.once('exit', r)) : null)));
  }
}
