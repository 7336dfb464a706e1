/**
 * Embedded MongoDB-compatible engine for development, tests and local sandboxes.
 * See README.md in this directory for what it is (and is not) for.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Engine, type Logger } from './engine';
import { PRIVATE_DIR_MODE } from './privateDir';
import { SocketListenError, WireServer } from './server';
import { TtlMonitor } from './ttl';

export interface EmbeddedMongoOptions {
  /** TCP port; 0 (default) picks a free ephemeral port. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /**
   * false: no TCP listener at all, only the Unix socket (`socketPath` required; `uri` is then the
   * socket's). TCP has no notion of who connects: any local process could read and write. Default true.
   */
  tcp?: boolean;
  /** Directory for journal + snapshot. Omit for memory-only. */
  dataDir?: string;
  logger?: Logger;
  /** host:port to advertise to drivers when binding 0.0.0.0 behind another name. */
  advertise?: string;
  /** Open transactions are aborted after this long. Default 60 000 ms. */
  transactionLifetimeMs?: number;
  /** Journal size that triggers a snapshot. Default 64 MB. */
  compactBytes?: number;
  /**
   * Also listen on a Unix domain socket: a path ending in `.sock`, or `true` for a socket in a
   * fresh private directory (0700) in os.tmpdir(). The file is 0600; it (and that directory) are
   * removed on close. Not available on Windows.
   */
  socketPath?: string | true;
  /**
   * A journal file that is not the last one and is corrupt part-way stops start-up (the files after it
   * hold acknowledged writes). true: cut that file at the damage and go on (the CLI's and the gateway's
   * DB_REPAIR_TRUNCATE=true). Default false.
   */
  repairTruncate?: boolean;
  /** Time between passes of the TTL monitor (mongod's ttlMonitorSleepSecs). Default 60 000 ms. */
  ttlMonitorIntervalMs?: number;
}

export interface EmbeddedMongo {
  /**
   * Connection string for the driver/mongoose, e.g. mongodb://127.0.0.1:PORT/?directConnection=true,
   * or the socket's with `tcp: false`.
   */
  uri: string;
  /** The TCP port; undefined with `tcp: false`. */
  port: number | undefined;
  /** With `socketPath`: the socket file and its connection string (mongodb://%2Ftmp%2F...sock/?directConnection=true). */
  socketPath?: string;
  socketUri?: string;
  close(): Promise<void>;
}

/**
 * A socket path in a directory created here, owner-only (0700), in os.tmpdir(): nobody else can
 * reach the socket even in the moment between its creation and its chmod. mkdirSync fails on an
 * existing name, so the directory is ours alone (mkdtemp's mixed-case suffix is not used because the
 * driver lower-cases addresses read from `hello`, which `?replicaSet=rs0` over the socket relies on).
 * The driver only takes hosts ending in `.sock` for sockets.
 */
function privateSocketPath(dir: string): string {
  fs.mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  fs.chmodSync(dir, PRIVATE_DIR_MODE); // the umask could only have narrowed it; say exactly what is meant
  return path.join(dir, SOCKET_NAME);
}

const SOCKET_NAME = 'engine.sock';

/** Connection string for a Unix socket path: the path, percent-encoded, as the host. */
export function socketUri(socketPath: string): string {
  return `mongodb://${encodeURIComponent(socketPath)}/?directConnection=true`;
}

export const REPLICA_SET_NAME = 'rs0';

export async function startEmbeddedMongo(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const engine = new Engine({
    dataDir: options.dataDir || undefined,
    logger: options.logger,
    transactionLifetimeMs: options.transactionLifetimeMs,
    compactBytes: options.compactBytes,
    repairTruncate: options.repairTruncate,
  });
  if (typeof options.socketPath === 'string' && !options.socketPath.endsWith('.sock')) {
    throw new Error(`socketPath must end in .sock (drivers only treat such hosts as socket paths): ${options.socketPath}`);
  }
  const tcp = options.tcp ?? true;
  if (!tcp && options.socketPath === undefined) throw new Error('tcp: false needs a socketPath (nothing to listen on otherwise)');
  engine.open();
  let privateDir: string | undefined;
  const removePrivateDir = () => {
    if (privateDir) fs.rmSync(privateDir, { recursive: true, force: true });
  };
  let server: WireServer;
  try {
    let socketPath = options.socketPath;
    if (socketPath === true) {
      const dir = path.join(os.tmpdir(), `mongodb-embedded-${process.pid}-${crypto.randomBytes(6).toString('hex')}`);
      try {
        socketPath = privateSocketPath(dir);
      } catch (e) {
        throw new SocketListenError(path.join(dir, SOCKET_NAME), e);
      }
      privateDir = dir;
    }
    server = new WireServer(engine, {
      tcp: tcp ? { host: options.host ?? '127.0.0.1', port: options.port ?? 0 } : undefined,
      advertise: options.advertise,
      setName: REPLICA_SET_NAME,
      socketPath,
    });
    await server.listen();
  } catch (e) {
    removePrivateDir();
    await engine.close();
    throw e;
  }
  const sock = server.socketPath;
  // directConnection: the driver talks to exactly this address whatever hello advertises, while
  // still seeing a replica-set primary (so sessions, transactions and change streams work).
  const uri = tcp ? `mongodb://${server.hostPort}/?directConnection=true` : socketUri(sock!);
  const ttl = new TtlMonitor(engine, { intervalMs: options.ttlMonitorIntervalMs }).start();
  let closing: Promise<void> | undefined;
  return {
    uri,
    port: server.port,
    ...(sock ? { socketPath: sock, socketUri: socketUri(sock) } : {}),
    close: () =>
      (closing ??= (async () => {
        await ttl.stop();
        await server.close();
        removePrivateDir();
        await engine.close();
      })()),
  };
}

export type { Logger };
export { SocketListenError };
export { startEmbeddedMongoInWorker, type ThreadedEmbeddedMongoOptions } from './threaded';
