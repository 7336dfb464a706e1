import { workerWithoutCallerSemiSpace } from '@pgw/embedded-mongo/threaded';
import type { Config } from '../config';
import { logger } from '../logger';
import { wakeElsewhere, type GatewayTimers } from '../platform/timers/timerService';
import { setPeerMetrics, type MetricsJson } from '../metrics/registry';
import type { ToBackground, FromBackground } from './messages';

/**
 * The gateway's background thread, seen from the HTTP thread (BACKGROUND_THREAD=true; off by default): it
 * runs the timers and the webhooks of the events they store, so that a saturated HTTP thread does not make
 * the rail's steps late; opt-in because on 2 cores it made them later
 * (docs/decisions/0002-background-thread-opt-in.md). A thread that fails is a gateway that fails. More:
 * docs/decisions/notes/timers-and-clock.md, "The background thread".
 */
export interface BackgroundThread {
  /** Stops the thread's services (timers finish, queued webhooks stay pending) and ends it. */
  stop(): Promise<void>;
}

const STOP_TIMEOUT_MS = 20_000;
/** A scrape waits this long for the background thread's part (then answers without it). */
const METRICS_TIMEOUT_MS = 2_000;

/** `timers`: the HTTP thread's, whose soon-due timers now wake the background thread's poller. */
export function startBackgroundThread(config: Config, databaseUri: string, timers: GatewayTimers): BackgroundThread {
  const fromSource = import.meta.url.endsWith('.ts');
  // Bundled (`npm start`): dist/background.js (build.mjs). From source, an entry that registers tsx in
  // the thread first, as `npm run dev` runs the gateway.
  const entry = new URL(fromSource ? './workerFromSource.mjs' : './background.js', import.meta.url);
  // Not npm start's 64 MiB semi-spaces, which are for the HTTP thread's request garbage (threaded.ts).
  const worker = workerWithoutCallerSemiSpace(entry, {
    workerData: { config, databaseUri },
    // Not the parent's flags: its --import loaders are its own.
    execArgv: [],
    name: 'pgw-background',
  });
  let stopping = false;
  const send = (message: ToBackground) => worker.postMessage(message);
  wakeElsewhere(timers, (fireAt) => send({ type: 'wake', fireAt }));
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
  worker.on('error', (err) => {
    logger.fatal({ err }, 'the background thread failed');
  });
  void exited.then((code) => {
    if (stopping) return;
    logger.fatal({ code }, 'the background thread stopped unexpectedly: the gateway stops');
    process.exit(1);
  });
  // GET /metrics merges what this thread's timers and webhooks observed (src/metrics/registry.ts).
  const asked = new Map<number, (metrics: MetricsJson) => void>();
  let nextId = 0;
  setPeerMetrics(
    () =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        const timeout = setTimeout(() => {
          asked.delete(id);
          reject(new Error('the background thread did not answer in time'));
        }, METRICS_TIMEOUT_MS);
        asked.set(id, (metrics) => {
          clearTimeout(timeout);
          asked.delete(id);
          resolve(metrics);
        });
        send({ type: 'metrics', id });
      }),
  );
  worker.on('message', (message: FromBackground) => {
    if (message.type === 'ready') logger.info('background thread running: timers and their webhooks');
    else if (message.type === 'metrics') asked.get(message.id)?.(message.metrics);
  });
  return {
    async stop() {
      if (stopping) return exited.then(() => undefined);
      stopping = true;
      wakeElsewhere(timers, null);
      setPeerMetrics(null);
      send({ type: 'stop' });
      const timeout = setTimeout(() => {
        logger.warn('the background thread did not stop in time: terminated');
        void worker.terminate();
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timeout);
    },
  };
}
