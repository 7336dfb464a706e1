import type http from 'node:http';
import type { Config } from '../config';

/**
 * Something started with the gateway and stopped before the database closes. Services are declared by
 * the floors that own the work (domain, realtime, graphql) and composed in one place, src/server.ts;
 * they import this type from here, so nothing imports the server back.
 */
export interface BackgroundService {
  name: string;
  start(ctx: ServiceContext): Promise<void> | void;
  /** Called before HTTP connections are closed, e.g. to end long-lived streams. */
  beforeClose?(): Promise<void> | void;
  stop(): Promise<void> | void;
}

export interface ServiceContext {
  config: Config;
  /** Absent in the gateway's background thread (src/background), which serves no HTTP. */
  httpServer?: http.Server;
}

/** Starts the services in order, each after the previous one has started. */
export async function startServices(services: readonly BackgroundService[], ctx: ServiceContext): Promise<void> {
  for (const service of services) await service.start(ctx);
}

/** Before the HTTP server closes: in reverse start order. */
export async function beforeCloseServices(services: readonly BackgroundService[]): Promise<void> {
  for (const service of [...services].reverse()) await service.beforeClose?.();
}

/** Stops the services in reverse start order, each after the later ones have stopped. */
export async function stopServices(services: readonly BackgroundService[]): Promise<void> {
  for (const service of [...services].reverse()) await service.stop();
}
