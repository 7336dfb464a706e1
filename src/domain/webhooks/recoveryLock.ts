import { ApiError } from '../../errors';
import { WebhookEndpointModel, type EndpointRecovery } from './webhookEndpointModel';

/**
 * One recovery (POST /webhook_endpoints/{id}/recover) per endpoint at a time, and none for a cooldown
 * after it ends (contract decisions, "Hostile clients at the edge"): a recovery re-sends up to 256
 * deliveries to a URL the caller chose, so calls in a row would multiply that traffic.
 *
 * Kept on the endpoint document and taken with a conditional update, so that it holds across every
 * gateway process on the database. Real time, not the account's sandbox clock: an advance (free for the
 * caller) must not shorten it. A run whose process died is taken for over after RUN_LEASE_MS.
 */
const RUN_LEASE_MS = 10 * 60_000;

/** Starts a recovery of the endpoint, or throws 409 (404 when it is not the account's). Returns the run's name. */
export async function startRecovery(accountId: string, endpointId: string, cooldownMs: number): Promise<number> {
  const started = Date.now();
  const recovery: EndpointRecovery = { running: true, until: started + RUN_LEASE_MS, started };
  const taken = await WebhookEndpointModel.updateOne(
    { _id: endpointId, account_id: accountId, $or: [{ recovery: null }, { 'recovery.until': { $lte: started } }] },
    { $set: { recovery } },
  );
  if (taken.modifiedCount === 1) return started;
  const current = await WebhookEndpointModel.findOne({ _id: endpointId, account_id: accountId }, { recovery: 1 }).lean();
  if (!current) throw ApiError.notFound('webhook endpoint', endpointId);
  throw recoveryBusy(current.recovery, cooldownMs, started);
}

/** Ends the run `started` (not a later one): the cooldown starts now. */
export async function finishRecovery(endpointId: string, started: number, cooldownMs: number): Promise<void> {
  const recovery: EndpointRecovery = { running: false, until: Date.now() + cooldownMs, started };
  await WebhookEndpointModel.updateOne({ _id: endpointId, 'recovery.started': started, 'recovery.running': true }, { $set: { recovery } });
}

/**
 * 409, with the time another may run: the contract has no `conflict` code, so the one of its 409 codes
 * whose meaning is "the operation does not fit the object's state" (openapi.yaml, ErrorCode).
 */
function recoveryBusy(recovery: EndpointRecovery | null | undefined, cooldownMs: number, now: number): ApiError {
  const cooldown = `${Math.round(cooldownMs / 1000)} s`;
  if (recovery?.running) {
    // Its end is not known yet: the earliest another can start is a cooldown from now.
    return new ApiError('payment_already_processed', `A recovery of this endpoint is running; another may start ${cooldown} after it ends`, {
      'Retry-After': String(Math.ceil(cooldownMs / 1000)),
    });
  }
  const until = recovery?.until ?? now;
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  return new ApiError('payment_already_processed', `This endpoint was recovered less than ${cooldown} ago; it may be recovered again at ${new Date(until).toISOString()} (in ${seconds} s)`, {
    'Retry-After': String(seconds),
  });
}
