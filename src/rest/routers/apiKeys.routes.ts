import { createRestrictedKey, listApiKeys, revokeApiKey, toApiKeyResource } from '../../domain/accounts/apiKey.service';
import { defineRoute } from '../defineRoute';

export const apiKeyRoutes = [
  defineRoute('listApiKeys', { permission: 'secret_key' }, async (ctx) => ({
    status: 200,
    body: { object: 'list', data: (await listApiKeys(ctx.actor.accountId)).map(toApiKeyResource) },
  })),
  defineRoute('createApiKey', { permission: 'secret_key' }, async (ctx, { body }) => ({
    status: 201,
    body: await createRestrictedKey(ctx.actor.accountId, body),
  })),
  defineRoute('revokeApiKey', { permission: 'secret_key' }, async (ctx, { params }) => ({
    status: 200,
    body: toApiKeyResource(await revokeApiKey(ctx.actor.accountId, params.id)),
  })),
];
