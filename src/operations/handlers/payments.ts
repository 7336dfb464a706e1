import { ApiError } from '../../errors';
import { createClientToken, deleteClientToken } from '../../domain/clientTokens/clientTokenService';
import { toDeletedClientToken } from '../../domain/clientTokens/clientTokenSerializer';
import { getEvent, listEvents } from '../../domain/events/eventService';
import { PAYMENT_METHODS } from '../../domain/payments/methods';
import { toPublicPaymentView } from '../../domain/payments/paymentSerializer';
import {
  cancelPaymentIntent,
  createPaymentIntent,
  getPaymentIntent,
  getPaymentIntentForAccount,
  listPaymentIntents,
} from '../../domain/payments/paymentService';
import { searchPaymentIntents } from '../../domain/payments/paymentSearch';
import { simulateReferencePaid } from '../../domain/payments/reference';
import { createRefund, getRefund } from '../../domain/refunds/refundService';
import { advanceSandboxClock, getSandboxClock } from '../../domain/sandbox/sandboxClockService';
import { resetSandbox } from '../../domain/sandbox/sandboxResetService';
import { grantFor } from '../caller';
import type { GraphQLHandlerTable } from '../graphqlOperations';
import type { HandlerTable } from '../types';
import { allOf, pageOf, withOneMore } from './listPage';

/** Payments, refunds, their events, client tokens and the sandbox's payment tools. */
export const paymentHandlers = {
  // Any key, the publishable one included: checkout front ends read the method list.
  listPaymentMethods: async () => allOf([...PAYMENT_METHODS]),
  createPaymentIntent: async (ctx, { body }) =>
    createPaymentIntent(ctx.runtime, ctx.actor, body, { idempotency: ctx.idempotency, account: ctx.account, paymentNumber: ctx.prefetched }),
  listPaymentIntents: async (ctx, { query }) =>
    pageOf(await listPaymentIntents(ctx.actor, { limit: withOneMore(query.limit), status: query.status, startingAfter: query.starting_after }), query.limit),
  getPaymentIntent: async (ctx, { params }) => getPaymentIntent(ctx.actor, params.id, ctx.prefetched),
  cancelPaymentIntent: async (ctx, { params }) => cancelPaymentIntent(ctx.runtime, ctx.actor, params.id),
  createRefund: async (ctx, { body }) => createRefund(ctx.runtime, ctx.actor, body, ctx.idempotency),
  getRefund: async (ctx, { params }) => getRefund(ctx.actor, params.id),
  listEvents: async (ctx, { query }) =>
    pageOf(
      await listEvents(ctx.actor.accountId, { limit: withOneMore(query.limit), type: query.type, objectId: query.object_id, startingAfter: query.starting_after }),
      query.limit,
    ),
  // Client tokens: the merchant's server mints one per payment, its frontend reads that payment's public
  // view with it. Not idempotent (each POST mints another token), like Stripe's ephemeral keys.
  createClientToken: async (ctx, { body }) => createClientToken(ctx.actor.accountId, body),
  deleteClientToken: async (ctx, { params }) => {
    await deleteClientToken(ctx.actor.accountId, params.id);
    return toDeletedClientToken(params.id);
  },
  // The one-shot read of a token's payment: the same public view as the pages and the public stream.
  getPublicPayment: async (ctx, { params }) => {
    // No token at all: 400, as when the (now deprecated) query parameter was required.
    if (ctx.caller.kind === 'public') throw ApiError.invalid("A client token is required: send 'Authorization: Bearer ct_test_…'");
    const grant = grantFor(ctx.caller, params.id);
    return toPublicPaymentView(await getPaymentIntentForAccount(grant.accountId, params.id));
  },
  simulateReferencePaid: async (ctx, { body }) => simulateReferencePaid(ctx.runtime, ctx.actor, body.reference),
  getSandboxClock: async (ctx) => getSandboxClock(ctx.actor),
  advanceSandboxClock: async (ctx, { body }) => advanceSandboxClock(ctx.runtime, ctx.actor, body.seconds),
  resetSandbox: async (ctx) => resetSandbox(ctx.runtime, ctx.actor.accountId),
} satisfies HandlerTable<
  | 'listPaymentMethods'
  | 'createPaymentIntent'
  | 'listPaymentIntents'
  | 'getPaymentIntent'
  | 'cancelPaymentIntent'
  | 'createRefund'
  | 'getRefund'
  | 'listEvents'
  | 'createClientToken'
  | 'deleteClientToken'
  | 'getPublicPayment'
  | 'simulateReferencePaid'
  | 'getSandboxClock'
  | 'advanceSandboxClock'
  | 'resetSandbox'
>;

/** The dashboard's payment search, and one event by id (graphqlOperations.ts). */
export const paymentGraphQLHandlers = {
  searchPaymentIntents: async (ctx, { search, limit, startingAfter }) => searchPaymentIntents(ctx.actor, search, { limit, startingAfter }),
  getEvent: async (ctx, { id }) => getEvent(ctx.actor.accountId, id),
} satisfies GraphQLHandlerTable<'searchPaymentIntents' | 'getEvent'>;
