import { createSandboxAccount, getAccount, toAccountResource } from '../../domain/accounts/account.service';
import { defineRoute } from '../defineRoute';

export const accountRoutes = [
  defineRoute('createSandboxAccount', { public: true }, async (_ctx, { body }) => ({
    status: 201,
    body: await createSandboxAccount(body),
  })),
  defineRoute('getAccount', { permission: 'account:read' }, async (ctx) => ({
    status: 200,
    body: toAccountResource(await getAccount(ctx.actor.accountId)),
  })),
];
