import type http from 'node:http';
import type { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import type { WriteGate } from '../http/writeGate';
import { httpOperation } from '../metrics/http';
import type { BackgroundService } from '../platform/lifecycle';
import type { Realtime } from '../realtime/createRealtime';
import type { GraphQLContext } from './context';
import { wantsHtml } from './graphiql';
import { graphqlHttpHandler } from './http';
import { createHttpSubscriptions, type HttpSubscriptions } from './httpSubscriptions/stream';
import { buildExecutableSchema } from './schema';
import { createApollo } from './apollo';
import { GRAPHQL_PATH, startGraphqlWs } from './ws';
import { isPath } from '../http/paths';

const graphqlRequests = httpOperation('graphql');

/**
 * One gateway's GraphQL endpoint, built by src/server.ts and held by that gateway alone: `endpoint` is
 * mounted in its Express app (an endpoint layer, src/rest/app.ts), `service` starts Apollo and
 * graphql-ws once its HTTP server exists (the drain plugin and the WebSocket server need it) and ends
 * its subscriptions, and only its, when it stops. Requests that arrive before the start wait for it.
 */
export interface Graphql {
  /**
   * `POST /graphql` (after the write gate: its mutations create payments, src/http/writeGate.ts) and `GET
   * /graphql` for queries, as one layer matched on the exact path; a browser asking for HTML goes on to
   * GraphiQL (graphiqlRouter, mounted with the root routers).
   */
  endpoint: RequestHandler;
  /** Apollo and graphql-ws: started with the gateway's services, stopped with them. */
  service: BackgroundService;
  /** Its subscriptions streamed over HTTP (GraphQL over SSE, multipart). */
  httpSubscriptions: HttpSubscriptions;
}

/**
 * `config`: the Config the gateway serves with; `runtime`: its own services, for the contexts of its
 * requests and subscriptions; `realtime`: its connection places, which its sockets and HTTP
 * subscriptions take; `writeGate`: the one its REST API holds writes in too.
 */
export function createGraphql(config: Config, deps: { runtime: GatewayRuntime; realtime: Realtime; writeGate: WriteGate }): Graphql {
  const { runtime, realtime, writeGate } = deps;
  const schema = buildExecutableSchema();
  const httpSubscriptions = createHttpSubscriptions(realtime.connections);
  let resolveApollo!: (server: ApolloServer<GraphQLContext>) => void;
  let rejectApollo!: (err: unknown) => void;
  const apolloStarted = new Promise<ApolloServer<GraphQLContext>>((resolve, reject) => {
    resolveApollo = resolve;
    rejectApollo = reject;
  });
  apolloStarted.catch(() => undefined);

  const handler = graphqlHttpHandler(config, runtime, schema, () => apolloStarted, httpSubscriptions, realtime.clientTokens);
  // Express's own matching, kept: any case, one trailing slash (the server's listener matches the same way).
  const matches = (path: string) => isPath(path, GRAPHQL_PATH);
  const endpoint: RequestHandler = (req, res, next) => {
    if (!matches(req.path)) return next();
    res.locals.httpMetric = graphqlRequests;
    if (req.method === 'POST') return writeGate(req, res, (err?: unknown) => (err ? next(err) : handler(req, res, next)));
    if ((req.method === 'GET' || req.method === 'HEAD') && !wantsHtml(req)) return handler(req, res, next);
    next();
  };

  let apollo: ApolloServer<GraphQLContext> | null = null;
  let ws: { dispose(): Promise<void> } | null = null;
  const service: BackgroundService = {
    name: 'graphql',
    async start({ httpServer }: { httpServer?: http.Server }) {
      if (!httpServer) throw new Error('the GraphQL service runs beside the HTTP server');
      try {
        const server = createApollo(schema, [
          ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdownGraceMs }),
          // Apollo's drain phase also ends the WebSocket subscriptions.
          { serverWillStart: async () => ({ drainServer: async () => ws?.dispose() }) },
        ]);
        await server.start();
        ws = startGraphqlWs(httpServer, schema, config, runtime, realtime.connections, realtime.clientTokens);
        apollo = server;
        resolveApollo(server);
      } catch (err) {
        rejectApollo(err);
        throw err;
      }
    },
    // Before the HTTP server closes: open WebSockets and HTTP subscription streams would otherwise hold
    // its close until the grace ends.
    async beforeClose() {
      httpSubscriptions.closeAll();
      await ws?.dispose();
    },
    async stop() {
      httpSubscriptions.closeAll();
      await ws?.dispose();
      await apollo?.stop();
    },
  };
  return { endpoint, service, httpSubscriptions };
}
