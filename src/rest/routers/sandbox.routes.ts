import { simulateReferencePaid } from '../../domain/payments/reference';
import { advanceSandboxClock, getSandboxClock } from '../../domain/sandbox/sandboxClock.service';
import { defineRoute } from '../defineRoute';

export const sandboxRoutes = [
  defineRoute('simulateReferencePaid', { permission: 'sandbox:write' }, async (ctx, input) => ({
    status: 200,
    body: await simulateReferencePaid(ctx.actor, input.body.reference),
  })),
  defineRoute('getSandboxClock', { permission: 'sandbox:read' }, async (ctx) => ({
    status: 200,
    body: await getSandboxClock(ctx.actor),
  })),
  defineRoute('advanceSandboxClock', { permission: 'sandbox:write' }, async (ctx, input) => ({
    status: 200,
    body: await advanceSandboxClock(ctx.actor, input.body.seconds),
  })),
];
