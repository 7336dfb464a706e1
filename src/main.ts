import { ConfigError, loadConfig } from './config';
import { logger } from './logger';
import { startDataDir } from './db/embeddedEngine';
import { printReadyLine } from './readyLine';
import { startGateway } from './server';
import { startTracing, stopTracing } from './tracing/tracing';

/** What a stop may take beyond SHUTDOWN_GRACE_MS: timers, then webhook attempts in flight (5 s each, ./domain/webhooks). */
const STOP_MARGIN_MS = 20_000;

/** Process entry: `npm start`. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // `npm start` keeps the embedded engine's data in ./data unless DATA_DIR says otherwise
  // (DATA_DIR= with an empty value means memory only): the rule src/start.ts starts the engine early by.
  if (!config.mongodbUri) config = Object.freeze({ ...config, dataDir: startDataDir(process.env) });

  // Before anything that serves or stores: every request and command then runs in its span.
  if (await startTracing(process.env)) logger.info('tracing on: spans go out over OpenTelemetry');
  const gateway = await startGateway(config);
  // Known only now: with PORT=0 the default public URL names the port actually served.
  printReadyLine(gateway.config.publicBaseUrl, logger.level);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down gracefully');
    // The stop's bound (docs/operations.md, "Stopping"): requests get SHUTDOWN_GRACE_MS, then timers and
    // webhook attempts in flight finish (each bounded by its 5 s timeout). A stop stuck past that exits
    // anyway, code 1: what was not finished is in the database for the next process.
    setTimeout(() => {
      logger.error({ afterMs: config.shutdownGraceMs + STOP_MARGIN_MS }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, config.shutdownGraceMs + STOP_MARGIN_MS).unref();
    gateway
      .close()
      // The spans still buffered go out before the exit.
      .then(() => stopTracing())
      .then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'gateway failed to start');
  process.exit(1);
});
