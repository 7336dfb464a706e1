import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { connectDatabase, type DatabaseHandle } from './db/connection';
import { logger } from './logger';
import { beforeCloseServices, drainHttpServer, startServices, stopServices } from './platform/lifecycle';
import { httpThreadServices } from './background/services';
import { createHttpServer } from './http/httpServer';
import { startBackgroundThread, type BackgroundThread } from './background/thread';
import { secretsKey } from './domain/webhooks/secretsKey';
import { createApp, type GatewayApp } from './rest/app';
import { createPagesRouter } from './pages/pagesRouter';
import { createRealtime, type Realtime } from './realtime/createRealtime';
import { deleteSessionsOfKey } from './domain/sessions/sessionService';
import { onKeyRevoked } from './domain/accounts/keyRevocation';
import { onClientTokenRevoked } from './domain/clientTokens/clientTokenRevocation';
import { createGraphql, type Graphql } from './graphql/createGraphql';
import { GRAPHQL_PATH } from './http/paths';
import { createGatewayWriteGate, type WriteGate } from './http/writeGate';
import { graphiqlRouter } from './graphql/graphiql';
import { dashboardSessionRouter } from './dashboard/sessionRouter';
import { dashboardAssetsRouter } from './dashboard/assetsRouter';
import { readAtScrape } from './metrics/gauges';
import { countDueTimers } from './platform/timers/timerService';
import { countWebhookBacklog } from './domain/webhooks/webhookBacklog';
import { databaseAnswers } from './db/connection';
import { createGatewayRuntime, type GatewayRuntime } from './domain/gatewayRuntime';
import { webhookTargetPolicy } from './domain/webhooks/targetResolver';

export interface Gateway {
  /** e.g. http://127.0.0.1:53121 */
  url: string;
  port: number;
  httpServer: http.Server;
  db: DatabaseHandle;
  /** What this gateway holds of its own: its hooks, timer handlers and outboxes (src/domain/gatewayRuntime.ts). */
  runtime: GatewayRuntime;
  /** Its realtime layer: its connection places and open event streams (src/realtime/createRealtime.ts). */
  realtime: Realtime;
  /** Its GraphQL endpoint: Apollo, graphql-ws, its subscriptions over HTTP (src/graphql/createGraphql.ts). */
  graphql: Graphql;
  /** The write gate its REST API and POST /graphql share (src/http/writeGate.ts). */
  writeGate: WriteGate;
  /** The Config it serves with: the one it was started with, its public URL naming the served port when derived from PORT. */
  config: Config;
  /** Graceful: stop accepting, finish in-flight requests, stop background work, close the database. */
  close(): Promise<void>;
}

/** `register`: more handlers or hooks of the caller's own (a test's timer kind), on the runtime before its services start. */
export async function startGateway(config: Config, opts: { register?: (runtime: GatewayRuntime) => void } = {}): Promise<Gateway> {
  // The database connects (on a restart: the embedded engine loads its data, in its own thread) while
  // this thread opens the port and builds the app, the GraphQL schema among it: neither needs the
  // database, and a restart then takes about as long as the engine's load, not the sum.
  const connecting = connectDatabase({ mongodbUri: config.mongodbUri, dataDir: config.dataDir });
  // Awaited below; until then a failure must not count as unhandled.
  connecting.catch(() => undefined);
  // Built here, for this gateway alone: each module's factory registers on it, none on module state, so
  // a second gateway in this process runs its own hooks and timers, not a second copy in each.
  const runtime = createGatewayRuntime({ webhookTargets: webhookTargetPolicy(config) });
  // Its own too, handed to the protocols: its connection places and streams (REST's and GraphQL's), and
  // one write gate for REST and GraphQL. Its close ends its streams alone.
  const realtime = createRealtime({ limits: config.connections });
  const writeGate = createGatewayWriteGate(config);
  // A revoked key's live connections close (this gateway's, until it stops), then its dashboard sessions
  // end (the domain calls no floor above it; the sessions are the process's: registering twice keeps one).
  const forgetKeyRevocation = onKeyRevoked(realtime.connections.closeConnectionsOfKey);
  onKeyRevoked(deleteSessionsOfKey);
  // A revoked client token's open streams on this gateway end at once (other processes: clientTokenStreams.ts).
  const forgetTokenRevocation = onClientTokenRevoked(realtime.clientTokens.endStreamsOf);
  const forgetRevocations = () => {
    forgetKeyRevocation();
    forgetTokenRevocation();
  };
  // The gauges GET /metrics reads at scrape time: each floor's own count, handed to the metrics floor.
  readAtScrape({ timersDue: countDueTimers, webhookBacklog: countWebhookBacklog, databaseUp: databaseAnswers });
  const httpServer = createHttpServer(config);
  // The port opens before the services start (their start needs the server); a request arriving
  // meanwhile waits for the app instead of never being answered.
  const early: Array<[http.IncomingMessage, http.ServerResponse]> = [];
  const holdEarly = (req: http.IncomingMessage, res: http.ServerResponse) => early.push([req, res]);
  httpServer.on('request', holdEarly);

  let db: DatabaseHandle;
  let app: GatewayApp;
  let port: number;
  let served: Config;
  let graphql: Graphql;
  let services: ReturnType<typeof httpThreadServices>;
  try {
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.port, config.host, () => {
        httpServer.off('error', reject);
        resolve();
      });
    });
    port = (httpServer.address() as AddressInfo).port;
    // With PORT=0 the default PUBLIC_BASE_URL can only be known once the port is: links and checkout
    // URLs must point at the port actually served. A new Config, not a changed one.
    served = config.publicBaseUrlFromEnv ? config : Object.freeze({ ...config, publicBaseUrl: `http://localhost:${port}` });
    // Built once the Config it serves with is known: its contexts carry that Config's public URL.
    graphql = createGraphql(served, { runtime, realtime, writeGate });
    services = httpThreadServices(runtime, { backgroundThread: config.backgroundThread, realtime, graphql });
    opts.register?.(runtime);
    app = createApp(served, runtime, { writeGate, realtime }, {
      endpoints: [{ path: GRAPHQL_PATH, handler: graphql.endpoint, direct: ['POST'] }],
      // The dashboard's app after its session routes (it leaves /dashboard/session to them).
      rootRouters: [createPagesRouter(served), graphiqlRouter(served), dashboardSessionRouter(served), dashboardAssetsRouter()],
    });
    db = await connecting;
    // Background services (timer handlers above all) are running before the first request is served.
    // One that fails to start stops those that did (startServices).
    await startServices(services, { config: served, httpServer });
  } catch (err) {
    // Whichever failed, nothing stays open: the port (requests held meanwhile cut, never answered by an
    // app that did not start), and the database once it has connected.
    if (httpServer.listening) {
      const closed = new Promise((resolve) => httpServer.close(resolve));
      httpServer.closeAllConnections();
      await closed;
    }
    forgetRevocations();
    await connecting.then((opened) => opened.close(), () => undefined);
    throw err;
  }
  // After this thread's services: the final PUBLIC_BASE_URL and the webhook secrets key it loaded (a
  // memory-only gateway makes one up) are the background thread's too.
  const background: BackgroundThread | undefined = served.backgroundThread
    ? startBackgroundThread({ ...served, webhookSecretsKey: secretsKey() }, db.uri, runtime.timers)
    : undefined;
  httpServer.off('request', holdEarly);
  httpServer.usePrototypes(app.app.request, app.app.response);
  httpServer.on('request', app.listener);
  for (const [req, res] of early.splice(0)) app.listener(req, res);

  let closing: Promise<void> | undefined;
  // The stop sequence (docs/operations.md, "Stopping"): 1. the port closes (new connections refused);
  // 2. streams end with a reconnect hint (SSE `retry:`, graphql-ws close 1012), since they come back to
  // another process; 3. requests in flight finish, each answered with `Connection: close`, within
  // SHUTDOWN_GRACE_MS, then what is left is cut; 4. timers stop (running ones finish), their events'
  // hooks run; 5. webhook attempts in flight finish and are recorded, queued ones are left PENDING for
  // the next process; 6. the database closes.
  const close = () => {
    closing ??= (async () => {
      const t0 = Date.now();
      const cut = await drainHttpServer(httpServer, config.shutdownGraceMs, () => beforeCloseServices(services));
      const drainedMs = Date.now() - t0;
      // The background thread's timers and webhooks finish while this thread's hooks still can.
      await background?.stop();
      await stopServices(services);
      forgetRevocations();
      await db.close();
      logger.info({ drainedMs, cutConnections: cut, stoppedMs: Date.now() - t0 }, 'gateway stopped');
    })();
    return closing;
  };

  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ port, database: db.kind }, `gateway listening on http://${host}:${port}`);
  return { url: `http://${host}:${port}`, port, httpServer, db, runtime, realtime, graphql, writeGate, config: served, close };
}
