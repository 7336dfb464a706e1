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
  /** Distinct events received per second, first event's created_at to last receipt. */
  deliveredPerSecond: number;
  lagP50: number;
  lagP99: number;
}

/**
 * Webhooks: a fresh account with one endpoint (`payment.created`) pointing at a local receiver process,
 * then `webhookEvents` payments created `connections` at a time. Lag = receipt time at the receiver
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

    const t0 = performance.now();
    await pool(
      Array.from({ length: s.webhookEvents }, (_, i) => i),
      s.connections,
      () => createReferenceIntent(account.api),
    );
    const producedPerSecond = s.webhookEvents / ((performance.now() - t0) / 1000);
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
      deliveredPerSecond: report.receipts.length / ((lastReceived - firstCreated) / 1000),
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
    };
  } finally {
    if (receiver.connected) command({ type: 'close' });
    if (receiver.exitCode === null) await new Promise((r) => receiver.once('exit', r));
  }
}
