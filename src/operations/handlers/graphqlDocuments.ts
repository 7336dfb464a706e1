import { getGraphqlSettings, updateGraphqlSettings } from '../../domain/graphqlDocuments/graphqlSettingsService';
import {
  deleteTrustedDocument,
  listTrustedDocuments,
  registerTrustedDocuments,
} from '../../domain/graphqlDocuments/trustedDocumentService';
import type { HandlerTable } from '../types';
import { allOf, pageOf, withOneMore } from './listPage';

/** The account's trusted GraphQL documents and the modes that say who must run only them. */
export const graphqlDocumentHandlers = {
  listGraphqlDocuments: async (ctx, { query }) =>
    pageOf(await listTrustedDocuments(ctx.actor.accountId, withOneMore(query.limit), query.starting_after), query.limit),
  registerGraphqlDocuments: async (ctx, { body }) => allOf(await registerTrustedDocuments(ctx.actor.accountId, body)),
  deleteGraphqlDocument: async (ctx, { params }) => deleteTrustedDocument(ctx.actor.accountId, params.id),
  getGraphqlSettings: async (ctx) => getGraphqlSettings(ctx.actor.accountId),
  updateGraphqlSettings: async (ctx, { body }) => updateGraphqlSettings(ctx.actor.accountId, body),
} satisfies HandlerTable<'listGraphqlDocuments' | 'registerGraphqlDocuments' | 'deleteGraphqlDocument' | 'getGraphqlSettings' | 'updateGraphqlSettings'>;
