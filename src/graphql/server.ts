import type http from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import type { RequestHandler } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config';
import { ApiError, isApiError } from '../errors';
import type { BackgroundService } from '../platform/lifecycle';
import type { GraphQLContext } from './context';
import { apolloDocumentStore } from './documentCache';
import { apiGraphQLError, formatGraphQLError, logInternalErrors, withRequestId } from './errors';
import { wantsHtml } from './graphiql';
import { graphqlHttpHandler } from './http';
import { closeAllHttpSubscriptions } from './httpSubscriptions/stream';
import { checkOperationLimits, limitsCheckedAhead } from './limits';
import { buildExecutableSchema } from './schema';
import { GRAPHQL_PATH, startGraphqlWs } from './ws';
import { writeGateOf } from '../http/writeGate';
import { UNAVAILABLE_RETRY_AFTER_S } from '../db/unavailable';
import { httpOperation } from '../metrics/http';
import { graphqlOperation } from '../metrics/domain';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

const graphqlRequests = httpOperation('graphql');

/**
 * The GraphQL endpoint of one gateway: `graphqlEndpoint(config, runtime)` is mounted in the Express app (an
 * endpoint layer, src/rest/app.ts) and `graphqlService()` starts Apollo and graphql-ws once the HTTP
 * server exists (the drain plugin and the WebSocket server need it). They meet through the gateway's Config object; requests
 * that arrive before the start wait for it.
 */
interface Endpoint {
  schema: GraphQLSchema;
  /** The gateway's own services, for the contexts of its requests and subscriptions. */
  runtime: GatewayRuntime;
  apollo: Promise<ApolloServer<GraphQLContext>>;
  resolveApollo: (server: ApolloServer<GraphQLContext>) => void;
  rejectApollo: (err: unknown) => void;
}

// eslint-disable-next-line no-restricted-syntax -- per process until createRealtime/createGraphql (issue 59): each gateway's endpoint found by its Config, not held by the gateway
const endpoints = new WeakMap<Config, Endpoint>();

function endpointFor(config: Config, runtime: GatewayRuntime): Endpoint {
  let endpoint = endpoints.get(config);
  if (!endpoint) {
    let resolveApollo!: Endpoint['resolveApollo'];
    let rejectApollo!: Endpoint['rejectApollo'];
    const apollo = new Promise<ApolloServer<GraphQLContext>>((resolve, reject) => {
      resolveApollo = resolve;
      rejectApollo = reject;
    });
    apollo.catch(() => undefined);
    endpoint = { schema: buildExecutableSchema(), runtime, apollo, resolveApollo, rejectApollo };
    endpoints.set(config, endpoint);
  }
  return endpoint;
}

/**
 * `POST /graphql` (after the write gate: its mutations create payments, src/http/writeGate.ts) and `GET
 * /graphql` for queries, as one layer matched on the exact path; a browser asking for HTML goes on to
 * GraphiQL (graphiqlRouter, mounted with the root routers).
 */
export function graphqlEndpoint(config: Config, runtime: GatewayRuntime): RequestHandler {
  const endpoint = endpointFor(config, runtime);
  const handler = graphqlHttpHandler(config, runtime, endpoint.schema, () => endpoint.apollo);
  const gate = writeGateOf(config);
  // Express's own matching, kept: any case, one trailing slash.
  const matches = (path: string) => path.length <= GRAPHQL_PATH.length + 1 && path.toLowerCase().replace(/\/$/, '') === GRAPHQL_PATH;
  return (req, res, next) => {
    if (!matches(req.path)) return next();
    res.locals.httpMetric = graphqlRequests;
    if (req.method === 'POST') return gate(req, res, (err?: unknown) => (err ? next(err) : handler(req, res, next)));
    if ((req.method === 'GET' || req.method === 'HEAD') && !wantsHtml(req)) return handler(req, res, next);
    next();
  };
}

/**
 * Per-request hooks (HTTP): request ids on errors, internal errors logged. The limits ran in http.ts
 * with the admission, before Apollo's validation; an operation that reached Apollo another way
 * (executeOperation, in tests) is measured here, once Apollo has validated it.
 */
const requestPlugin: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ schema, document, operation, operationName, request, contextValue }) {
        try {
          if (operation?.operation === 'subscription') {
            throw ApiError.invalid('Subscriptions are served over WebSocket at /graphql (subprotocol graphql-transport-ws), not over HTTP POST');
          }
          if (!limitsCheckedAhead(contextValue)) {
            // A publishable key may read payment methods only: not the schema either.
            const mayIntrospect = contextValue.authenticated && contextValue.key.type !== 'publishable';
            checkOperationLimits(schema, document, operationName, request.variables, { mayIntrospect });
          }
        } catch (err) {
          throw isApiError(err) ? apiGraphQLError(err) : err;
        }
      },
      async didEncounterErrors({ errors, contextValue }) {
        logInternalErrors(errors, contextValue.requestId);
      },
      async willSendResponse({ response, contextValue, operation }) {
        // What Apollo's cache-control plugin answered for every operation here (none has a cache hint).
        response.http.headers.set('cache-control', 'no-store');
        const failed = response.body.kind === 'single' && Boolean(response.body.singleResult.errors?.length);
        graphqlOperation(operation?.operation ?? 'unknown')[failed ? 'error' : 'ok'].inc();
        if (response.body.kind !== 'single' || !response.body.singleResult.errors) return;
        const errors = withRequestId(response.body.singleResult.errors, contextValue.requestId);
        response.body.singleResult.errors = errors;
        for (const e of errors) if (typeof e.extensions?.code === 'string') contextValue.errorCodes.push(e.extensions.code);
        // A field the database could not serve: the answer tells the client when to retry, as REST's 503 does.
        if (contextValue.errorCodes.includes('service_unavailable')) response.http.headers.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
      },
    };
  },
};

/** Apollo with the gateway's error formatting and limits; stack traces never leave the server. */
export function createApollo(schema: GraphQLSchema, plugins: ApolloServerPlugin<GraphQLContext>[] = []): ApolloServer<GraphQLContext> {
  return new ApolloServer<GraphQLContext>({
    schema,
    introspection: true,
    // Automatic persisted queries are resolved before Apollo, in the caller's account (requestParams.ts), so
    // that every rule sees the document that runs; Apollo's own cache would be shared by every account.
    persistedQueries: false,
    // Apollo's documents are the admission's (documentCache.ts): one cache, bounded in bytes.
    documentStore: apolloDocumentStore(schema),
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError,
    // The gateway owns SIGTERM/SIGINT (src/main.ts) and stops Apollo in order with everything else;
    // Apollo's own handler raced it and left `npm start` hanging on shutdown.
    stopOnTerminationSignals: false,
    // No cache hints exist in this schema, but the default cache-control plugin wraps every field's
    // resolver to compute them: a call or two more per field per item (its header is set above).
    plugins: [...plugins, ApolloServerPluginLandingPageDisabled(), ApolloServerPluginCacheControlDisabled(), requestPlugin],
  });
}

export function graphqlService(): BackgroundService {
  let apollo: ApolloServer<GraphQLContext> | null = null;
  let ws: { dispose(): Promise<void> } | null = null;
  return {
    name: 'graphql',
    async start({ config, httpServer }: { config: Config; httpServer?: http.Server }) {
      const endpoint = endpoints.get(config);
      if (!endpoint) return; // the router is not mounted: no GraphQL in this gateway
      if (!httpServer) throw new Error('the GraphQL service runs beside the HTTP server');
      try {
        const server = createApollo(endpoint.schema, [
          ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdownGraceMs }),
          // Apollo's drain phase also ends the WebSocket subscriptions.
          { serverWillStart: async () => ({ drainServer: async () => ws?.dispose() }) },
        ]);
        await server.start();
        ws = startGraphqlWs(httpServer, endpoint.schema, config, endpoint.runtime);
        apollo = server;
        endpoint.resolveApollo(server);
      } catch (err) {
        endpoint.rejectApollo(err);
        throw err;
      }
    },
    // Before the HTTP server closes: open WebSockets and HTTP subscription streams would otherwise hold
    // its close until the grace ends.
    async beforeClose() {
      closeAllHttpSubscriptions();
      await ws?.dispose();
    },
    async stop() {
      closeAllHttpSubscriptions();
      await ws?.dispose();
      await apollo?.stop();
    },
  };
}
