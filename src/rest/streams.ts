import type { Request, Response } from 'express';
import { getPaymentIntentForAccount } from '../domain/payments/paymentService';
import { authorizedKey } from '../operations/authorize';
import { grantFor, type Caller } from '../operations/caller';
import type { OperationInput, StreamOperationId } from '../operations/types';
import { fullView, loadPublicStreamPayment, preparePaymentStream, publicView } from '../realtime/paymentStream';
import type { SseConnection } from '../realtime/sse';
import type { Realtime } from '../realtime/createRealtime';

export interface StreamContext {
  caller: Caller;
  ip: string;
  req: Request;
  res: Response;
  /** The gateway's realtime layer: its event streams open within its caps, end with its shutdown. */
  realtime: Pick<Realtime, 'sse' | 'clientTokens'>;
}

/** A stream operation's REST side: it writes `ctx.res` itself (server-sent events). */
export type StreamRoutes = { [K in StreamOperationId]: (ctx: StreamContext, input: Omit<OperationInput<K>, 'body'>) => Promise<void> };

/**
 * Server-sent-event streams of a payment. Authentication, the rate limit (one count per connection),
 * permission, the caps on open streams (per client IP, and per key) and the 404 checks happen before the
 * first byte; the handlers then write the response themselves.
 */
export const streamRoutes: StreamRoutes = {
  streamPaymentIntentEvents: async (ctx, { params, headers }) => {
    const { actor } = authorizedKey(ctx.caller, 'streamPaymentIntentEvents');
    const accountId = actor.accountId;
    await ctx.realtime.sse.open(ctx.res, { ip: ctx.ip, keyId: actor.apiKeyId }, () =>
      preparePaymentStream(
        { accountId, paymentId: params.id, loadIntent: () => getPaymentIntentForAccount(accountId, params.id), view: fullView },
        headers['last-event-id'],
      ),
    );
  },
  // With a client token: any payment of the account, the token's own (grantFor: 401 for another one).
  streamPublicPaymentEvents: async (ctx, { params, headers }) => {
    const id = params.id;
    const grant = ctx.caller.kind === 'clientToken' ? grantFor(ctx.caller, id) : undefined;
    const { accountId } = grant ?? (await loadPublicStreamPayment(id));
    const loadIntent = grant ? () => getPaymentIntentForAccount(accountId, id) : async () => (await loadPublicStreamPayment(id)).intent;
    await ctx.realtime.sse.open(ctx.res, { ip: ctx.ip, keyId: null }, async () => {
      const stream = await preparePaymentStream({ accountId, paymentId: id, loadIntent, view: publicView }, headers['last-event-id']);
      if (!grant) return stream;
      return {
        attach(conn: SseConnection) {
          stream.attach(conn);
          // The token's expiry or revocation ends the stream; EventSource's reconnection then gets 401.
          conn.onClose(ctx.realtime.clientTokens.hold(grant, () => conn.endWith('client token expired or revoked')));
        },
      };
    });
  },
};
