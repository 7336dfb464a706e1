import { createAccount, createReferenceIntent } from '../lib/api';
import { forkTs } from '../lib/processes';
import type { Service } from '../lib/services';
import type { BenchSettings } from '../lib/settings';
import { percentile, pool, sleep } from '../lib/stats';
import type { ReceiverCommand, ReceiverMessage } from './receiver';

export interface WebhookResult {
  events: number;
  delivered: number;
  duplicates: number;
  rejected: number;
  firstRejection?: string;
  /** Events produced per second (payment creations). */
  producedPerSecond: number;
  /** The pace asked for (0 = as fast as possible). */
  rate: number;
  /** Distinct events received per second, first event's created_at to last receipt. */
  deliveredPerSecond: number;
  lagP50: number;
  lagP99: number;
  /**
   * Latency of the creations that produced the events. An event's `created_at` is stamped when the
   * creation starts handling, so the lag includes most of the creation request.
   */
  createP50: number;
  createP99: number;
}

/**
 * Webhooks: a fresh account with one endpoint (`payment.created`) pointing at a local receiver process,
 * then `webhookEvents` payments created at `webhookRate` per second (at most `connections` at a time;
 * rate 0 = as fast as they go, which saturates the gateway with creations, so the lag then measures
 * that queue as much as the delivery path). Lag = receipt time at the receiver
 * minus the event's `created_at` (both wall clock on this machine; created_at has millisecond
 * resolution).
 */
export async function runWebhooks(gw: Service, s: BenchSettings, log: (m: string) => void): Promise<WebhookResult> {
  const receiver = forkTs('bench/webhooks/receiver.ts');
  const message = <T extends ReceiverMessage['type']>(type: T, timeoutMs: number) =>
    new Promise<Extract<ReceiverMessage, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`webhook receiver: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: ReceiverMessage) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        receiver.off('message', onMessage);
        resolve(m as never);
      };
      receiver.on('message', onMessage);
    });
  const command = (c: ReceiverCommand) => receiver.send(c);
  try {
    const { port } = await message('ready', 30_000);
    const account = await createAccount(gw.url, 'bench webhooks');
    const endpoint = await account.api.must<{ secret: string }>(201, 'POST', '/webhook_endpoints', {
      url: `http://127.0.0.1:${port}/hooks`,
      events: ['payment.created'],
      name: 'bench receiver',
    });
    command({ type: 'secret', secret: endpoint.secret });

    const produce = async (count: number) => {
      const t0 = performance.now();
      const createMs: number[] = [];
      await pool(Array.from({ length: count }, (_, i) => i), s.connections, async (i) => {
        // Paced: event i is produced at t0 + i / rate (unless `connections` creations are in flight).
        if (s.webhookRate > 0) {
          const wait = t0 + (i * 1000) / s.webhookRate - performance.now();
          if (wait > 0) await sleep(wait);
        }
        const started = performance.now();
        await createReferenceIntent(account.api);
        createMs.push(performance.now() - started);
      });
      return { createMs, seconds: (performance.now() - t0) / 1000 };
    };
    // Warm-up, unrecorded: the gateway was just started (JIT, connection pool), as the HTTP rows have.
    await produce(Math.max(10, Math.round((s.webhookRate || 50) * s.warmupS)));
    await sleep(1_000);
    command({ type: 'reset' });

    const { createMs, seconds } = await produce(s.webhookEvents);
    const producedPerSecond = s.webhookEvents / seconds;
    log(`  ${s.webhookEvents} events produced at ${producedPerSecond.toFixed(0)}/s; waiting for deliveries`);

    const deadline = Date.now() + 60_000 + s.webhookEvents * 20;
    let report: Extract<ReceiverMessage, { type: 'report' }>;
    for (;;) {
      command({ type: 'report' });
      report = await message('report', 30_000);
      if (report.receipts.length >= s.webhookEvents || Date.now() > deadline) break;
      await sleep(500);
    }
    const lags = report.receipts.map((r) => r.receivedAtMs - r.createdAtMs);
    const firstCreated = Math.min(...report.receipts.map((r) => r.createdAtMs));
    const lastReceived = Math.max(...report.receipts.map((r) => r.receivedAtMs));
    return {
      events: s.webhookEvents,
      delivered: report.receipts.length,
      duplicates: report.duplicates,
      rejected: report.rejected,
      firstRejection: report.firstRejection,
      producedPerSecond,
      rate: s.webhookRate,
      deliveredPerSecond: report.receipts.length / ((lastReceived - firstCreated) / 1000),
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
      createP50: percentile(createMs, 50),
      createP99: percentile(createMs, 99),
    };
  } finally {
    if (receiver.connected) command({ type: 'close' });
    if (receiver.exitCode === null) await new Promise((r) => receiver.once('exit', r));
  }
}
