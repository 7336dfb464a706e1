import { createHmac } from 'node:crypto';
import type { components } from '../../../generated/openapi';

/**
 * Chaos per endpoint (PUT /webhook_endpoints/{id}/chaos): what it does to one genuine delivery, decided
 * once when the delivery is created and stored on it (`chaos_plan`), so that whichever process or
 * thread sends it (the first attempt, the sweeper after a crash, a retry) does the same.
 *
 * Every choice is a number drawn from HMAC-SHA256(seed, event id + endpoint id): the same seed makes the
 * same choices for the same deliveries in every gateway, and nothing here keeps state between calls.
 */
export type ChaosSettings = components['schemas']['WebhookChaosSettings'];
export type ChaosReport = components['schemas']['WebhookChaosReport'];
export type ChaosKind = components['schemas']['WebhookChaosKind'];
/** The kinds that are copies of a delivery, each a delivery of its own sent once and never retried. */
export type ChaosCopyKind = Extract<ChaosKind, 'duplicate' | 'bad_signature' | 'stale_timestamp'>;
export type ForgedKind = Extract<ChaosKind, 'bad_signature' | 'stale_timestamp'>;

export interface ChaosPlan {
  /** Forged copies sent before the first attempt, in this order. */
  forged: ForgedKind[];
  /** The duplicate goes this long after the first attempt; null for none. */
  duplicate_after_ms: number | null;
  /** Held until the endpoint's next delivery has been sent (at most REORDER_HOLD_MAX_MS). */
  reorder: boolean;
  /** The first attempt waits this long (0: no delay). */
  delay_ms: number;
}

export const EMPTY_CHAOS_REPORT: ChaosReport = { forged_sent: 0, forged_rejected: 0, forged_accepted: 0, duplicates_sent: 0, reordered: 0, delayed: 0 };
export const REORDER_HOLD_MAX_MS = 10_000;
/** "Within 5 s" of the first attempt: drawn below that bound. */
const DUPLICATE_WITHIN_MS = 2_000;
/** The `t` of a stale_timestamp copy: an hour old, far outside a receiver's tolerance (@pgw/client: 10 min). */
export const STALE_TIMESTAMP_AGE_S = 3_600;

/** Uniform numbers in [0, 1), one per 4 bytes of the digest: 8 of them, each used for one choice. */
function draws(seed: number, eventId: string, endpointId: string): number[] {
  const digest = createHmac('sha256', String(seed)).update(`${eventId}:${endpointId}`).digest();
  return Array.from({ length: 8 }, (_, i) => digest.readUInt32BE(i * 4) / 2 ** 32);
}

/** What chaos does to the delivery of `eventId` to `endpointId`; null when it does nothing. */
export function chaosPlan(settings: ChaosSettings | null | undefined, eventId: string, endpointId: string): ChaosPlan | null {
  if (!settings) return null;
  const [dup, reorder, bad, stale, delay, dupAfter] = draws(settings.seed, eventId, endpointId) as [number, number, number, number, number, number];
  const forged: ForgedKind[] = [];
  if (bad < settings.bad_signature) forged.push('bad_signature');
  if (stale < settings.stale_timestamp) forged.push('stale_timestamp');
  const range = settings.delay_ms;
  const plan: ChaosPlan = {
    forged,
    duplicate_after_ms: dup < settings.duplicate ? Math.floor(dupAfter * DUPLICATE_WITHIN_MS) : null,
    reorder: reorder < settings.reorder,
    delay_ms: range ? range.min + Math.floor(delay * (range.max - range.min + 1)) : 0,
  };
  const nothing = forged.length === 0 && plan.duplicate_after_ms === null && !plan.reorder && plan.delay_ms === 0;
  return nothing ? null : plan;
}

/** The kind a genuine delivery shows in the log: reordered above delayed when both fell. */
export function genuineKind(plan: ChaosPlan | null): ChaosKind | null {
  if (!plan) return null;
  if (plan.reorder) return 'reordered';
  return plan.delay_ms > 0 ? 'delayed' : null;
}

/** A secret the endpoint never had, for the bad_signature copy: derived, so repeatable too. */
export function wrongSecret(seed: number, eventId: string): string {
  return `whsec_${createHmac('sha256', String(seed)).update(`wrong:${eventId}`).digest('hex').slice(0, 32)}`;
}

/** The report's counters a sent copy moves: `accepted` is a 2xx from the receiver. */
export function copyCounters(kind: ChaosCopyKind, accepted: boolean): Partial<ChaosReport> {
  if (kind === 'duplicate') return { duplicates_sent: 1 };
  return accepted ? { forged_sent: 1, forged_accepted: 1 } : { forged_sent: 1, forged_rejected: 1 };
}

/** The counters a genuine delivery's plan moves once, when the delivery is created. */
export function planCounters(plan: ChaosPlan): Partial<ChaosReport> {
  return { ...(plan.reorder && { reordered: 1 }), ...(plan.delay_ms > 0 && { delayed: 1 }) };
}
