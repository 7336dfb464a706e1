/**
 * Embedded MongoDB-compatible engine for development, tests and local sandboxes.
 * See README.md in this directory for what it is (and is not) for.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Engine, type Logger } from './engine';
import { WireServer } from './server';
import { TtlMonitor } from './ttl';

export interface EmbeddedMongoOptions {
  /** TCP port; 0 (default) picks a free ephemeral port. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
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
   * Also listen on a Unix domain socket (TCP keeps listening): a path ending in `.sock`, or
   * `true` for a unique file in os.tmpdir(). Removed on close. Not available on Windows.
   */
  socketPath?: string | true;
  /** Time between passes of the TTL monitor (mongod's ttlMonitorSleepSecs). Default 60 000 ms. */
  ttlMonitorIntervalMs?: number;
}

export interface EmbeddedMongo {
  /** Connection string for the driver/mongoose, e.g. mongodb://127.0.0.1:PORT/?directConnection=true */
  uri: string;
  port: number;
  /** With `socketPath`: the socket file and its connection string (mongodb://%2Ftmp%2F...sock/?directConnection=true). */
  socketPath?: string;
  socketUri?: string;
  close(): Promise<void>;
}

/** A fresh socket path in os.tmpdir() (the driver only takes hosts ending in `.sock` for sockets). */
export function uniqueSocketPath(): string {
  return path.join(os.tmpdir(), `mongodb-embedded-${process.pid}-${crypto.randomBytes(4).toString('hex')}.sock`);
}

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
  });
  if (typeof options.socketPath === 'string' && !options.socketPath.endsWith('.sock')) {
    throw new Error(`socketPath must end in .sock (drivers only treat such hosts as socket paths): ${options.socketPath}`);
  }
  engine.open();
  const server = new WireServer(engine, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    advertise: options.advertise,
    setName: REPLICA_SET_NAME,
    socketPath: options.socketPath === true ? uniqueSocketPath() : options.socketPath,
  });
  try {
    await server.listen();
  } catch (e) {
    await engine.close();
    throw e;
  }
  // directConnection: the driver talks to exactly this address whatever hello advertises, while
  // still seeing a replica-set primary (so sessions, transactions and change streams work).
  const uri = `mongodb://${server.hostPort}/?directConnection=true`;
  const ttl = new TtlMonitor(engine, { intervalMs: options.ttlMonitorIntervalMs }).start();
  let closing: Promise<void> | undefined;
  const sock = server.socketPath;
  return {
    uri,
    port: server.port,
    ...(sock ? { socketPath: sock, socketUri: socketUri(sock) } : {}),
    close: () =>
      (closing ??= (async () => {
        await ttl.stop();
        await server.close();
        await engine.close();
      })()),
  };
}

export type { Logger };
