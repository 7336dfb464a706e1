/**
 * Standalone engine: `npm run db`.
 *   DB_PORT   listening port (default 27017)
 *   DB_HOST   interface to bind (default 127.0.0.1)
 *   DATA_DIR  data directory (default ./data); empty string or --memory for memory-only
 *   DB_SOCKET also listen on this Unix socket path (must end in .sock; `auto` = a unique file in
 *             the temp directory); TCP keeps listening
 * Prints the connection string as MONGODB_URI=... (and MONGODB_SOCKET_URI=... with DB_SOCKET)
 * and shuts down cleanly on SIGINT/SIGTERM.
 */
import { startEmbeddedMongo } from './index';

function log(msg: string, extra?: object): void {
  const line = extra && Object.keys(extra).length ? `${msg} ${JSON.stringify(extra)}` : msg;
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

async function main(): Promise<void> {
  const memory = process.argv.includes('--memory') || process.env.DATA_DIR === '';
  const dataDir = memory ? undefined : (process.env.DATA_DIR ?? './data');
  const port = Number(process.env.DB_PORT ?? 27017);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid DB_PORT: ${process.env.DB_PORT}`);
  const socket = process.env.DB_SOCKET || undefined;
  const db = await startEmbeddedMongo({
    port,
    host: process.env.DB_HOST ?? '127.0.0.1',
    dataDir,
    advertise: process.env.DB_ADVERTISE || undefined,
    socketPath: socket === 'auto' ? true : socket,
    logger: log,
  });
  log(`embedded db listening (${dataDir ? `dataDir=${dataDir}` : 'memory only'})`, db.socketPath ? { socket: db.socketPath } : undefined);
  process.stdout.write(`MONGODB_URI=${db.uri}\n`);
  if (db.socketUri) process.stdout.write(`MONGODB_SOCKET_URI=${db.socketUri}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`embedded db: ${signal} received, shutting down`);
    db.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log('embedded db: error during shutdown', { error: String(e) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

// A development server should log and keep serving rather than die on a stray bug.
process.on('unhandledRejection', (e) => log('embedded db: unhandled rejection', { error: String(e) }));
process.on('uncaughtException', (e) => log('embedded db: uncaught exception', { error: e.stack ?? String(e) }));

main().catch((e: unknown) => {
  log('embedded db: failed to start', { error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
