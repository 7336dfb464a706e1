import { parentPort, workerData } from 'node:worker_threads';
import mongoose from 'mongoose';
import { logger } from '../logger';
import { CLIENT_OPTIONS } from '../db/writeConcern';
import { timeDatabaseCommands } from '../db/commandTiming';
import { metricsJson } from '../metrics/registry';
import { startServices, stopServices } from '../platform/lifecycle';
import { armFastPath } from '../platform/timers/timerPoller';
import { backgroundThreadServices } from './workerServices';
import { createGatewayRuntime } from '../domain/gatewayRuntime';
import { webhookTargetPolicy } from '../domain/webhooks/targetResolver';
import { startTracing, stopTracing } from '../tracing/tracing';
import type { BackgroundWorkerData, FromBackground, ToBackground } from './messages';

/**
 * The background thread's entry (src/background/thread.ts starts it; bundled as dist/background.js).
 * It connects to the database the HTTP thread already prepared (indexes are built there, before the
 * first request), runs the background services, and stops when told.
 */
const port = parentPort;
if (!port) throw new Error('src/background/worker.ts runs as the gateway background thread only');
const data = workerData as BackgroundWorkerData;
// A Buffer arrives as a plain Uint8Array.
const config = { ...data.config, webhookSecretsKey: data.config.webhookSecretsKey && Buffer.from(data.config.webhookSecretsKey) };
const send = (message: FromBackground) => port.postMessage(message);

// This thread's own SDK and command spans (V8 isolates share no module state).
await startTracing(process.env, 'background');
timeDatabaseCommands();
await mongoose.connect(data.databaseUri, CLIENT_OPTIONS);
// The thread's own runtime: its modules register there and are handed it.
const runtime = createGatewayRuntime({ webhookTargets: webhookTargetPolicy(config) });
const services = backgroundThreadServices(runtime);
await startServices(services, { config });
send({ type: 'ready' });

// eslint-disable-next-line no-restricted-syntax -- the background thread's entry module: one runtime per thread, stopped once
let stopping: Promise<void> | null = null;
port.on('message', (message: ToBackground) => {
  if (message.type === 'wake') armFastPath(runtime.timers, message.fireAt);
  else if (message.type === 'metrics') void metricsJson().then((metrics) => send({ type: 'metrics', id: message.id, metrics }));
  else if (message.type === 'stop') {
    stopping ??= (async () => {
      await stopServices(services);
      await mongoose.disconnect();
      await stopTracing();
      port.close();
    })().catch((err: unknown) => {
      logger.error({ err }, 'background thread: stopping failed');
      process.exit(1);
    });
  }
});
