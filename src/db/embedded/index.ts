/**
 * Embedded MongoDB-compatible engine for development, tests and local sandboxes.
 * See README.md in this directory for what it is (and is not) for.
 */
import { Engine, type Logger } from './engine';
import { WireServer } from './server';

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
}

export interface EmbeddedMongo {
  /** Connection string for the driver/mongoose, e.g. mongodb://127.0.0.1:PORT/?directConnection=true */
  uri: string;
  port: number;
  close(): Promise<void>;
}

export const REPLICA_SET_NAME = 'rs0';

export async function startEmbeddedMongo(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const engine = new Engine({
    dataDir: options.dataDir || undefined,
    logger: options.logger,
    transactionLifetimeMs: options.transactionLifetimeMs,
    compactBytes: options.compactBytes,
  });
  engine.open();
  const server = new WireServer(engine, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    advertise: options.advertise,
    setName: REPLICA_SET_NAME,
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
  let closing: Promise<void> | undefined;
  return {
    uri,
    port: server.port,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await engine.close();
      })()),
  };
}

export type { Logger };
