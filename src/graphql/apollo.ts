import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import type { GraphQLSchema } from 'graphql';
import { ApiError, isApiError } from '../errors';
import type { GraphQLContext } from './context';
import { apolloDocumentStore } from './documentCache';
import { apiGraphQLError, formatGraphQLError, logInternalErrors, withRequestId } from './errors';
import { checkOperationLimits, limitsCheckedAhead } from './limits';
import { UNAVAILABLE_RETRY_AFTER_S } from '../db/unavailable';
import { graphqlOperation } from '../metrics/domain';

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
