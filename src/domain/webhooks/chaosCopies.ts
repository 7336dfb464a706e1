import { isDuplicateKey } from '../../db/errors';
import { newId } from '../../ids';
import { logger } from '../../logger';
import { copyCounters, STALE_TIMESTAMP_AGE_S, wrongSecret, type ChaosCopyKind } from './chaos';
import { countChaos } from './chaosService';
import { activeSecrets } from './webhookEndpointService';
import type { Signing } from './signature';
import { attemptEntry, attemptError } from './attemptFailure';
import { WebhookDeliveryModel, type WebhookDeliveryRecord } from './webhookDeliveryModel';
import { INITIAL_STATE } from './deliveryStates';
import { applyDeliveryTransition } from './deliveryTransition';
import type { WebhookEndpointRecord } from './webhookEndpointModel';
import type { AttemptOutcome } from './webhookHttp';

/** Sends the stored body signed as given (the delivery service's one request); `header` is its Service-Signature. */
export type SendSigned = (signing: Signing) => Promise<AttemptOutcome & { header: string; headers: Record<string, string> }>;

/** How a copy is signed: forged for bad_signature and stale_timestamp, valid for a duplicate. */
function copySigning(kind: ChaosCopyKind, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, at: Date, seed: number): Signing {
  const now = Math.floor(Date.now() / 1000);
  if (kind === 'bad_signature') return { secrets: [wrongSecret(seed, d.event_id)], timestampSeconds: now };
  return { secrets: activeSecrets(endpoint, at), timestampSeconds: kind === 'stale_timestamp' ? now - STALE_TIMESTAMP_AGE_S : now };
}

/**
 * One chaos copy of genuine delivery `d`, sent once: a delivery of its own (`copy` = `chaos` = kind) is
 * written first, so that a second process attempting the same genuine delivery (after a lapsed lease)
 * meets the unique index and sends no second copy; then the request, its outcome, and the report.
 * Written as DEAD_LETTER from the start, so that no sweeper or retry ever sends it as genuine; a 2xx
 * makes it DELIVERED (on a forged copy: the receiver accepted it).
 */
export async function sendChaosCopy(kind: ChaosCopyKind, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, at: Date, send: SendSigned): Promise<void> {
  // The genuine delivery went with its endpoint, or with a sandbox reset, after this copy was planned: no copy.
  if (!(await WebhookDeliveryModel.exists({ _id: d._id }))) return;
  const seed = endpoint.chaos?.seed ?? 0;
  const copy: WebhookDeliveryRecord = {
    ...d,
    _id: newId('whd'),
    state: INITIAL_STATE.copy,
    step: 0,
    attempts: 0,
    lease_until: 0,
    next_attempt_at: null,
    created_at: at,
    chaos: kind,
    chaos_plan: null,
    copy: kind,
  };
  delete copy.event_created_at;
  delete copy.delivered_at;
  try {
    await WebhookDeliveryModel.create(copy);
  } catch (err) {
    if (isDuplicateKey(err)) return;
    throw err;
  }
  const a = await send(copySigning(kind, d, endpoint, at, seed));
  const accepted = a.status >= 200 && a.status < 300;
  await applyDeliveryTransition(
    accepted ? 'copy_accepted' : 'copy_refused',
    {
      id: copy._id,
      set: {
        step: 1,
        attempts: 1,
        last_status: a.status,
        last_ms: a.ms,
        last_attempt_at: at,
        signature_header: a.header,
        last_error: attemptError(a.status, a.error),
        request_headers: a.headers,
        attempt_log: [attemptEntry({ ...a, at })],
        ...(accepted && { delivered_at: at }),
      },
    },
    'update',
  );
  await countChaos(d.endpoint_id, copyCounters(kind, accepted));
}

/** The same, for callers that must not fail because a copy did (a copy is an extra, never the delivery). */
export async function trySendChaosCopy(...args: Parameters<typeof sendChaosCopy>): Promise<void> {
  try {
    await sendChaosCopy(...args);
  } catch (err) {
    logger.warn({ err, deliveryId: args[1]._id, kind: args[0] }, 'webhook chaos copy not sent');
  }
}
