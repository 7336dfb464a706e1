import { Gauge } from 'prom-client';
import { logger } from '../logger';
import { registry } from './registry';

/**
 * Gauges read at scrape time, from what src/server.ts hands in at start: a count of due timers, of
 * undelivered webhooks, a database ping. Each reading is one indexed query (or a ping) with a deadline;
 * one that fails or is late leaves the last value (the database one reads 0: not up).
 *
 * Beside a background thread both threads have these gauges; only the HTTP thread reads them (the
 * database is the same), the other's stay 0, and the merge takes the larger (`aggregator: 'max'`).
 */
export interface ScrapeReaders {
  timersDue(): Promise<number>;
  webhookBacklog(): Promise<number>;
  databaseUp(): Promise<boolean>;
}

const READ_DEADLINE_MS = 1_000;
// eslint-disable-next-line no-restricted-syntax -- the process's gauges (one registry) read the database its gateways share
let readers: ScrapeReaders | null = null;

export function readAtScrape(next: ScrapeReaders | null): void {
  readers = next;
}

function within<T>(reading: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('late')), READ_DEADLINE_MS);
  });
  return Promise.race([reading, late]).finally(() => clearTimeout(timer));
}

function readGauge(name: string, help: string, read: (r: ScrapeReaders) => Promise<number>, onFailure?: number): Gauge {
  return new Gauge({
    name,
    help,
    registers: [registry],
    aggregator: 'max',
    async collect() {
      if (!readers) return;
      try {
        this.set(await within(read(readers)));
      } catch (err) {
        logger.warn({ err, metric: name }, 'a gauge could not be read for this scrape');
        if (onFailure !== undefined) this.set(onFailure);
      }
    },
  });
}

readGauge('pgw_timers_due', 'Durable timers due now and not yet claimed (scheduled, fire time passed).', (r) => r.timersDue());
readGauge('pgw_webhook_backlog', 'Webhook deliveries not yet delivered nor dead-lettered (PENDING or RETRYING).', (r) => r.webhookBacklog());
readGauge('pgw_database_up', '1 when the database answers a ping within 1 s, else 0.', async (r) => ((await r.databaseUp()) ? 1 : 0), 0);

/** Open long-lived connections, by kind; moved as they open and close (src/realtime/connections.ts). */
const open = { sse: 0, graphql_ws: 0 };
export type RealtimeKind = keyof typeof open;
new Gauge({
  name: 'pgw_realtime_connections',
  help: 'Open long-lived connections: sse (event streams), graphql_ws (GraphQL over WebSocket).',
  labelNames: ['kind'],
  registers: [registry],
  collect() {
    this.set({ kind: 'sse' }, open.sse);
    this.set({ kind: 'graphql_ws' }, open.graphql_ws);
  },
});

export function connectionOpened(kind: RealtimeKind): void {
  open[kind]++;
}

export function connectionClosed(kind: RealtimeKind): void {
  open[kind]--;
}
