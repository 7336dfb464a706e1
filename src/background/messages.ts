import type { Config } from '../config';

/** What the HTTP thread hands the background thread at its start (src/background/thread.ts). */
export interface BackgroundWorkerData {
  config: Config;
  databaseUri: string;
}

/** HTTP thread -> background thread. */
export type ToBackground =
  /** A timer scheduled by the HTTP thread is due at `fireAt` (ms): wake the poller then. */
  | { type: 'wake'; fireAt: number }
  /** Stop the services, close the database connection, end the thread. */
  | { type: 'stop' };

/** Background thread -> HTTP thread. */
export type FromBackground = { type: 'ready' };
