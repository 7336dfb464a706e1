import type {
  GraphqlOperationType,
  GraphqlSettingsResolvers,
  MutationResolvers,
  QueryResolvers,
  TrustedDocumentConnectionResolvers,
  TrustedDocumentResolvers,
  TrustedDocumentsMode,
  TrustedDocumentsModes,
  TrustedDocumentsModesInput,
} from '../../../generated/graphql/resolvers-types';
import { toEnumName } from '../enums';
import { restBody, run } from '../input';
import { pageBounds, pageSize } from '../limits';
import type { GraphqlSettingsModel, TrustedDocumentModel } from '../models';
import { connectionFields, restConnection } from '../pagination';

/** Trusted documents and the GraphQL settings: the REST operations of /v1/graphql/..., in GraphQL's shape. */
export const TrustedDocumentQuery: Pick<QueryResolvers, 'trustedDocuments' | 'graphqlSettings'> = {
  trustedDocuments: (_p, { first, after }, ctx) =>
    restConnection(
      async (limit, startingAfter) => (await run(ctx, 'listGraphqlDocuments', { query: restBody({ limit: String(limit), starting_after: startingAfter ?? undefined }) })).data,
      pageSize('Query.trustedDocuments', first),
      after,
      pageBounds('Query.trustedDocuments').max,
    ),
  graphqlSettings: (_p, _a, ctx) => run(ctx, 'getGraphqlSettings'),
};

export const TrustedDocumentMutations: Pick<MutationResolvers, 'registerDocuments' | 'deleteTrustedDocument' | 'updateGraphqlSettings'> = {
  registerDocuments: async (_p, { documents }, ctx) => {
    const operations = documents.map((d) => restBody({ id: d.id, body: d.body, name: d.name ?? undefined }));
    return (await run(ctx, 'registerGraphqlDocuments', { body: { format: 'apollo-persisted-query-manifest', version: 1, operations } })).data;
  },
  deleteTrustedDocument: async (_p, { id }, ctx) => {
    const deleted = await run(ctx, 'deleteGraphqlDocument', { params: { id } });
    return { id: deleted.id, deleted: true };
  },
  updateGraphqlSettings: (_p, { trustedDocuments }, ctx) => run(ctx, 'updateGraphqlSettings', { body: { trusted_documents: restModes(trustedDocuments) } }),
};

function restModes(input: TrustedDocumentsModesInput) {
  const mode = (m: string | null | undefined) => (m ? (m.toLowerCase() as 'off' | 'audit' | 'enforce') : undefined);
  return restBody({
    secret_key: mode(input.secretKey),
    restricted_key: mode(input.restrictedKey),
    client_token: mode(input.clientToken),
    dashboard: mode(input.dashboard),
  });
}

export const TrustedDocument: TrustedDocumentResolvers = {
  type: (d: TrustedDocumentModel) => toEnumName<GraphqlOperationType>(d.type),
  createdAt: (d: TrustedDocumentModel) => d.created_at,
};

export const TrustedDocumentConnection: TrustedDocumentConnectionResolvers = connectionFields<TrustedDocumentModel>();

export const GraphqlSettings: GraphqlSettingsResolvers = {
  trustedDocuments: (s: GraphqlSettingsModel): TrustedDocumentsModes => ({
    secretKey: toEnumName<TrustedDocumentsMode>(s.trusted_documents.secret_key),
    restrictedKey: toEnumName<TrustedDocumentsMode>(s.trusted_documents.restricted_key),
    clientToken: toEnumName<TrustedDocumentsMode>(s.trusted_documents.client_token),
    dashboard: toEnumName<TrustedDocumentsMode>(s.trusted_documents.dashboard),
  }),
};
