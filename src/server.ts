import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { connectDatabase, type DatabaseHandle } from './db/connection';
import { logger } from './logger';
import { beforeCloseServices, startServices, stopServices, type BackgroundService } from './platform/lifecycle';
import { requestLogService } from './domain/logs/requestLog.background';
import { paymentsCoreService } from './domain/payments/payments.jobs';
import { createApp } from './rest/app';
import { createPagesRouter } from './pages/pages.router';
import { checkoutLifecycleService } from './domain/checkout/checkoutLifecycle';
import { webhookDeliveryService } from './domain/webhooks/webhook.background';
import { webhookTargetPolicy } from './domain/webhooks/targetResolver';
import { realtimeService } from './realtime/realtime.background';
import { subscribeAll } from './realtime/eventBus';
import { closeConnectionsOfKey } from './realtime/connections';
import { deleteSessionsOfKey } from './dashboard/session/session.service';
import { onKeyRevoked } from './domain/accounts/keyRevocation';
import { graphqlRouter, graphqlService } from './graphql/server';
import { dashboardSessionRouter } from './dashboard/session/session.router';

export interface Gateway {
  /** e.g. http://127.0.0.1:53121 */
  url: string;
  port: number;
  httpServer: http.Server;
  db: DatabaseHandle;
  /** Graceful: stop accepting, finish in-flight requests, stop background work, close the database. */
  close(): Promise<void>;
}

/**
 * Background services in start order (stopped in reverse). Later features add theirs here: the
 * durable timers, the event dispatcher, webhook delivery, the event bus, GraphQL subscriptions. Each is
 * given the settings of this gateway (no process-wide setting): here, or from `config` at its start.
 */
async function backgroundServices(config: Config): Promise<BackgroundService[]> {
  return [
    // First, so it stops last: the request log entries of the final requests are written.
    requestLogService,
    // Before the payments core, so that its completion hook stays until no payment can succeed.
    checkoutLifecycleService(),
    paymentsCoreService,
    // The webhook fast path hears every event from the event bus (the domain does not import realtime).
    webhookDeliveryService({ subscribeAll, policy: webhookTargetPolicy(config) }),
    realtimeService(),
    graphqlService(),
  ];
}

export async function startGateway(config: Config): Promise<Gateway> {
  const db = await connectDatabase({ mongodbUri: config.mongodbUri, dataDir: config.dataDir });
  const services = await backgroundServices(config);
  // A revoked key's live connections close, then its dashboard sessions end (the domain calls no floor above it).
  onKeyRevoked(closeConnectionsOfKey);
  onKeyRevoked(deleteSessionsOfKey);
  const httpServer = http.createServer();
  httpServer.keepAliveTimeout = 65_000;
  // The port opens before the services start (their start needs the server); a request arriving
  // meanwhile waits for the app instead of never being answered.
  const early: Array<[http.IncomingMessage, http.ServerResponse]> = [];
  const holdEarly = (req: http.IncomingMessage, res: http.ServerResponse) => early.push([req, res]);
  httpServer.on('request', holdEarly);

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(config.port, config.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const port = (httpServer.address() as AddressInfo).port;
  // With PORT=0 the default PUBLIC_BASE_URL can only be known once the port is: links and checkout
  // URLs must point at the port actually served.
  if (!config.publicBaseUrlFromEnv) config.publicBaseUrl = `http://localhost:${port}`;
  const app = createApp(config, { rootRouters: [createPagesRouter(config), graphqlRouter(config), dashboardSessionRouter(config)] });
  // Background services (timer handlers above all) are running before the first request is served.
  await startServices(services, { config, httpServer });
  httpServer.off('request', holdEarly);
  httpServer.on('request', app);
  for (const [req, res] of early.splice(0)) app(req, res);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await beforeCloseServices(services);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          httpServer.closeAllConnections();
        }, config.shutdownGraceMs);
        httpServer.close(() => {
          clearTimeout(timer);
          resolve();
        });
        httpServer.closeIdleConnections();
      });
      await stopServices(services);
      await db.close();
    })();
    return closing;
  };

  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ port, database: db.kind }, `gateway listening on http://${host}:${port}`);
  return { url: `http://${host}:${port}`, port, httpServer, db, close };
}
