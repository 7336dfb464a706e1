import { randomBytes } from 'node:crypto';
import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { cancelTimers } from '../../platform/timers/timerService';
import { logger } from '../../logger';
import { nowForAccount } from '../clock/accountTime';
import { ACCOUNT_CAPS } from '../accountCaps';
import { createWithinCap } from '../createWithinCap';
import { emitAccountEvent } from '../events';
import type { EventSink } from '../events/outbox';
import { rebuildRollups } from '../overview/rollupRebuild';
import { bumpEndpointsVersion } from './endpointCache';
import { forgetEndpointHolds, HOLD_TIMER_KIND } from './chaosHold';
import { sealSecret, openSecret } from './secretBox';
import { secretsKey } from './secretsKey';
import { assertAcceptableWebhookUrl, type WebhookTargetPolicy } from './targetResolver';
import { WebhookDeliveryModel } from './webhookDeliveryModel';
import { PendingEventModel } from './pendingEventModel';
import { WebhookEndpointModel, type WebhookEndpointRecord } from './webhookEndpointModel';
import { toWebhookEndpointResource, type WebhookEndpointResource, type WebhookEndpointWithSecretResource } from './webhookSerializer';

export const RETRY_TIMER_KIND = 'webhook.retry';
/** How long the previous secret keeps signing after a rotation (account clock). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface CreateWebhookEndpointInput {
  url?: string;
  mode?: 'push' | 'pull';
  events?: WebhookEndpointRecord['events'];
  name?: string;
  description?: string;
}

/**
 * `whsec_` and the base64 of 32 random bytes: the Standard Webhooks form, whose libraries take the
 * secret as given and decode it (contract decisions, "Versions and compatibility"). Secrets made before
 * (32 base62 characters) are valid base64 too and keep working for both signatures.
 */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * At most ACCOUNT_CAPS.webhookEndpoints per account (every event fans out to each matching one): over
 * it, 400 `invalid_request` and no endpoint. The cap holds under concurrent creates (createWithinCap:
 * insert, count, remove the newcomer when over).
 */
export async function createWebhookEndpoint(accountId: string, input: CreateWebhookEndpointInput, policy: WebhookTargetPolicy): Promise<WebhookEndpointWithSecretResource> {
  const mode = input.mode ?? 'push';
  // The one rule the schema does not say: a push endpoint needs its URL, a pull endpoint has none.
  if (mode === 'push' && input.url === undefined) throw ApiError.invalid('url: required for a push endpoint');
  if (mode === 'pull' && input.url !== undefined) throw ApiError.invalid('url: a pull endpoint has no url');
  if (input.url !== undefined) await assertAcceptableWebhookUrl(input.url, policy);
  const events: WebhookEndpointRecord['events'] = !input.events || input.events.includes('*') ? ['*'] : [...new Set(input.events)];
  const now = await nowForAccount(accountId);
  const secret = newSecret();
  const id = newId('whe');
  const doc = await createWithinCap('webhookEndpoints', {
    insert: () =>
      WebhookEndpointModel.create({
        _id: id,
        account_id: accountId,
        url: input.url ?? null,
        mode,
        events,
        name: input.name ?? null,
        description: input.description ?? null,
        secrets: [{ value: sealSecret(secretsKey(), id, secret), created_at: now, expires_at: null }],
        created_at: now,
      }),
    countHeld: () => WebhookEndpointModel.countDocuments({ account_id: accountId }),
    // An event in the moment it existed may have made a delivery to it: those go with it.
    remove: (created) => deleteWebhookEndpoint(accountId, created._id),
  });
  await bumpEndpointsVersion(accountId);
  return { ...toWebhookEndpointResource(doc.toObject()), secret };
}

/**
 * The account's endpoints, newest first: at most ACCOUNT_CAPS.webhookEndpoints, the contract's maxItems.
 * A create over the cap is undone right after its insert (createWithinCap), so for that moment one more
 * exists; the list never shows it beyond the cap.
 */
export async function listWebhookEndpoints(accountId: string): Promise<WebhookEndpointResource[]> {
  const docs = await WebhookEndpointModel.find({ account_id: accountId }).sort({ created_at: -1, _id: -1 }).limit(ACCOUNT_CAPS.webhookEndpoints).lean();
  return docs.map(toWebhookEndpointResource);
}

/** One endpoint as GET /webhook_endpoints lists it (no secret); another account's is 404. */
export async function getWebhookEndpoint(accountId: string, id: string): Promise<WebhookEndpointResource> {
  return toWebhookEndpointResource(await getWebhookEndpointRecord(accountId, id));
}

export async function getWebhookEndpointRecord(accountId: string, id: string): Promise<WebhookEndpointRecord> {
  const doc = await WebhookEndpointModel.findOne({ _id: id, account_id: accountId }).lean();
  if (!doc) throw ApiError.notFound('webhook endpoint', id);
  return doc;
}

/**
 * Deletes the endpoint, its deliveries, and its scheduled retries and chaos holds (their timers are keyed
 * by endpoint): a held delivery is dropped with the rest, and a hold released meanwhile anywhere finds
 * its delivery gone (deliveryService.ts, releaseHeld).
 */
export async function deleteWebhookEndpoint(accountId: string, id: string): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
  const res = await WebhookEndpointModel.deleteOne({ _id: id, account_id: accountId });
  if (res.deletedCount !== 1) throw ApiError.notFound('webhook endpoint', id);
  await bumpEndpointsVersion(accountId);
  await cancelTimers({ accountId, kind: RETRY_TIMER_KIND, refId: id });
  await cancelTimers({ accountId, kind: HOLD_TIMER_KIND, refId: id });
  forgetEndpointHolds(id);
  await WebhookDeliveryModel.deleteMany({ endpoint_id: id, account_id: accountId });
  await PendingEventModel.deleteMany({ endpoint_id: id, account_id: accountId });
  // The overview no longer counts them: its webhook rollups are recomputed, not waited for (a failure
  // leaves them counted until the next rebuild).
  rebuildRollups(accountId, ['webhooks']).catch((err: unknown) => logger.warn({ err, accountId }, 'overview rollups not rebuilt after an endpoint deletion'));
  return { id, object: 'webhook_endpoint', deleted: true };
}

/**
 * New secret first; the one before it keeps signing for 24 h (account clock), and the header never carries
 * more than two `v1=` values (receivers following the contract's pattern reject a third). One pipeline
 * update computes the list from the stored one, so two concurrent rotations cannot lose a secret already
 * returned to a caller. More: docs/decisions/notes/webhooks.md, "Secret rotation".
 */
export async function rotateWebhookSecret(accountId: string, id: string): Promise<WebhookEndpointWithSecretResource> {
  const now = await nowForAccount(accountId);
  const secret = newSecret();
  const previousUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const updated = await WebhookEndpointModel.findOneAndUpdate(
    { _id: id, account_id: accountId },
    [
      {
        $set: {
          secrets: {
            $concatArrays: [
              [{ value: { $literal: sealSecret(secretsKey(), id, secret) }, created_at: { $literal: now }, expires_at: null }],
              {
                $map: {
                  // The current secret (the only one without an expiry) becomes the previous one.
                  input: { $filter: { input: '$secrets', as: 's', cond: { $eq: ['$$s.expires_at', null] } } },
                  as: 's',
                  in: { value: '$$s.value', created_at: '$$s.created_at', expires_at: { $literal: previousUntil } },
                },
              },
            ],
          },
        },
      },
    ],
    { returnDocument: 'after', lean: true, updatePipeline: true },
  );
  if (!updated) throw ApiError.notFound('webhook endpoint', id);
  await bumpEndpointsVersion(accountId);
  return { ...toWebhookEndpointResource(updated), secret };
}

/**
 * Secrets that sign at account time `at`, newest first: the current one and, for 24 h after a
 * rotation, the one before it. At most two, also for endpoints stored before rotation kept only two.
 * Decrypted here, at the moment of signing (a wrong key throws SecretKeyError: nothing is sent).
 */
export function activeSecrets(endpoint: Pick<WebhookEndpointRecord, '_id' | 'secrets'>, at: Date): string[] {
  return endpoint.secrets
    .filter((s) => s.expires_at === null || new Date(s.expires_at).getTime() > at.getTime())
    .slice(0, 2)
    .map((s) => openSecret(secretsKey(), endpoint._id, s.value));
}

const TEST_MESSAGE_PREFIX = 'Test event from the payment gateway sandbox to webhook endpoint ';
const ENDPOINT_IN_MESSAGE = /to webhook endpoint (whe_[0-9A-Za-z]{24})$/;

/**
 * Stores a `test.ping` event. Its message names the endpoint: that is how the delivery hook (which
 * may run in another process, or after a restart) knows that this event goes to that endpoint only.
 */
export async function sendTestWebhook(sink: EventSink, accountId: string, id: string): Promise<{ object: 'test_event'; event_id: string; state: 'QUEUED' }> {
  await getWebhookEndpointRecord(accountId, id);
  const event = await emitAccountEvent(sink, accountId, 'test.ping', { message: `${TEST_MESSAGE_PREFIX}${id}` });
  return { object: 'test_event', event_id: event.id, state: 'QUEUED' };
}

/** The endpoint a test.ping is addressed to, from its message. */
export function testPingTarget(data: Record<string, unknown>): string | null {
  const message = typeof data.message === 'string' ? data.message : '';
  return ENDPOINT_IN_MESSAGE.exec(message)?.[1] ?? null;
}
