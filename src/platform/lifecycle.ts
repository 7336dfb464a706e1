import type http from 'node:http';
import type { Config } from '../config';
import { logger } from '../logger';

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

/**
 * Starts the services in order, each after the previous one has started. When one fails, those that
 * started are stopped again (in reverse) before its error is thrown: a failed start leaves nothing running.
 */
export async function startServices(services: readonly BackgroundService[], ctx: ServiceContext): Promise<void> {
  const startMs: Record<string, number> = {};
  const started: BackgroundService[] = [];
  for (const service of services) {
    const t0 = performance.now();
    try {
      await service.start(ctx);
    } catch (err) {
      logger.error({ err, service: service.name, started: started.map((s) => s.name) }, 'a service failed to start: stopping those that started');
      await stopServices(started).catch((stopErr: unknown) => logger.error({ err: stopErr }, 'a service did not stop after a failed start'));
      throw err;
    }
    started.push(service);
    startMs[service.name] = Math.round(performance.now() - t0);
  }
  // How long each took: a start's time is watched (bench/profile/restartPhases.ts).
  logger.info({ startMs }, 'services started');
}

/** Before the HTTP server closes: in reverse start order. */
export async function beforeCloseServices(services: readonly BackgroundService[]): Promise<void> {
  for (const service of [...services].reverse()) await service.beforeClose?.();
}

/** Stops the services in reverse start order, each after the later ones have stopped. */
export async function stopServices(services: readonly BackgroundService[]): Promise<void> {
  for (const service of [...services].reverse()) await service.stop();
}

/** How often, while draining, connections whose last answer has ended are closed. */
const DRAIN_SWEEP_MS = 50;

/**
 * The first step of a graceful stop: the server stops accepting connections at once (a client's next
 * connect is refused, so it goes to another instance or retries), every request already in gets its
 * whole answer, each with `Connection: close`, and each connection closes as soon as its answer has
 * ended (Node keeps serving a keep-alive connection after `close()` otherwise, for as long as its client
 * sends requests on it). `started` runs once the port is closed: the place to end long-lived streams,
 * which no longer come back to this process. After `graceMs` what is still open is cut.
 * Resolves with the number of connections cut.
 */
export async function drainHttpServer(server: http.Server, graceMs: number, started: () => Promise<void> | void = () => undefined): Promise<number> {
  const markClose = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  // Before the app's listener: a request read after this point is answered with `Connection: close`.
  server.prependListener('request', markClose);
  let cut = 0;
  const closed = new Promise<void>((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
  let timer: NodeJS.Timeout | undefined;
  try {
    await started();
    server.closeIdleConnections();
    await Promise.race([
      closed,
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          server.getConnections((err, count) => {
            cut = err ? -1 : count;
            server.closeAllConnections();
            resolve();
          });
        }, graceMs);
      }),
    ]);
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
    server.off('request', markClose);
  }
  return cut;
}
