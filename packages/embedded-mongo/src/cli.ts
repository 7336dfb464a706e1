/**
 * Standalone engine: `npm run db`.
 *   DB_PORT   listening port (default 27017)
 *   DB_HOST   interface to bind (default 127.0.0.1); only loopback (127.0.0.0/8, ::1, localhost)
 *             unless DB_ALLOW_REMOTE=true: the engine has no authentication
 *   DATA_DIR  data directory (default ./data); empty string or --memory for memory-only
 *   DB_REPAIR_TRUNCATE=true  cut a corrupt journal file that is not the last at the damage and
 *             go on (otherwise start-up stops, naming the file and offset)
 *   DB_SOCKET also listen on this Unix socket path (must end in .sock; `auto` = engine.sock in a
 *             private directory of the temp directory); TCP keeps listening
 * Prints the connection string as MONGODB_URI=... (and MONGODB_SOCKET_URI=... with DB_SOCKET)
 * and shuts down cleanly on SIGINT/SIGTERM.
 */
import net from 'node:net';
import { startEmbeddedMongo } from './index';

function log(msg: string, extra?: object): void {
  const line = extra && Object.keys(extra).length ? `${msg} ${JSON.stringify(extra)}` : msg;
  process.stderr.write(`${new Date().toISOString()} ${line}\n`);
}

/** ::1 in any of its spellings (0:0:0:0:0:0:0:1 ...). */
const IPV6_LOOPBACK = new net.BlockList();
IPV6_LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8 (also IPv4-mapped), ::1 and localhost: reachable from this machine only. */
function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  return net.isIPv6(h) && IPV6_LOOPBACK.check(h, 'ipv6');
}

async function main(): Promise<void> {
  const host = process.env.DB_HOST ?? '127.0.0.1';
  if (!isLoopback(host) && process.env.DB_ALLOW_REMOTE !== 'true') {
    // Before anything is opened: the engine has no authentication, so whoever reaches the port can
    // read and change every document. Exit code 2 = refused by configuration, not a crash.
    log(`embedded db: refusing to listen on DB_HOST=${host}: not a loopback address, and the engine has no authentication (anyone who reaches it can read and change every document); use 127.0.0.1, ::1 or localhost, or set DB_ALLOW_REMOTE=true on a network you trust`);
    process.exit(2);
  }
  const memory = process.argv.includes('--memory') || process.env.DATA_DIR === '';
  const dataDir = memory ? undefined : (process.env.DATA_DIR ?? './data');
  const port = Number(process.env.DB_PORT ?? 27017);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid DB_PORT: ${process.env.DB_PORT}`);
  const socket = process.env.DB_SOCKET || undefined;
  const db = await startEmbeddedMongo({
    port,
    host,
    dataDir,
    advertise: process.env.DB_ADVERTISE || undefined,
    repairTruncate: process.env.DB_REPAIR_TRUNCATE === 'true',
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
