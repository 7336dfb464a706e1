import type { Config } from '../config';
import type { MetricsJson } from '../metrics/registry';

/** What the HTTP thread hands the background thread at its start (src/background/thread.ts). */
export interface BackgroundWorkerData {
  config: Config;
  databaseUri: string;
}

/** HTTP thread -> background thread. */
export type ToBackground =
  /** A timer scheduled by the HTTP thread is due at `fireAt` (ms): wake the poller then. */
  | { type: 'wake'; fireAt: number }
  /** A scrape of GET /metrics: answer with this thread's metrics (`id` pairs the answer). */
  | { type: 'metrics'; id: number }
  /** Stop the services, close the database connection, end the thread. */
  | { type: 'stop' };

/** Background thread -> HTTP thread. */
export type FromBackground = { type: 'ready' } | { type: 'metrics'; id: number; metrics: MetricsJson };
