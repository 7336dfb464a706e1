import mongoose, { Schema } from 'mongoose';

/**
 * The overview's hourly rollups, one document per (account, sandbox hour), kept by `$inc` upserts and read
 * instead of the payments (at most 168 for 7 days, whatever the volume). `_id` is `${accountId}|${hour,
 * padded}`, so a range is one range of the `_id` index; the `|built` marker sorts after the hours. More:
 * docs/decisions/notes/events-and-payments.md, "Overview rollups".
 */
export const HOUR_MS = 3_600_000;

/** Counters of one (method, status): payments created in the hour now in that status, and their amounts. */
export interface StatusCounter {
  n: number;
  a: number;
}

export interface PaymentRollup {
  _id: string;
  /** Per method as stored (`multicaixa_express`), per current status. */
  m?: Record<string, Record<string, StatusCounter>>;
}

/** Lag bin counters: how many delivered ones fell in the bin and the largest lag among them, ms. */
export interface LagCounter {
  n: number;
  m: number;
}

export interface WebhookRollup {
  _id: string;
  /** Deliveries created (whatever their state now). */
  c?: number;
  /** Of them, delivered. */
  d?: number;
  /** Of them, dead-lettered. */
  f?: number;
  /** Delivered ones with both times, per lag bin (lagHistogram.ts). */
  l?: Record<string, LagCounter>;
}

const options = { versionKey: false, minimize: false, strict: false } as const;

export const PaymentRollupModel = mongoose.model<PaymentRollup>(
  'OverviewPaymentRollup',
  new Schema<PaymentRollup>({ _id: { type: String, required: true }, m: { type: Schema.Types.Mixed } }, { ...options, collection: 'overview_payment_rollups' }),
);

export const WebhookRollupModel = mongoose.model<WebhookRollup>(
  'OverviewWebhookRollup',
  new Schema<WebhookRollup>(
    { _id: { type: String, required: true }, c: Number, d: Number, f: Number, l: { type: Schema.Types.Mixed } },
    { ...options, collection: 'overview_webhook_rollups' },
  ),
);

export function hourStart(at: Date | number): number {
  const ms = typeof at === 'number' ? at : at.getTime();
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

export function rollupId(accountId: string, hourStartMs: number): string {
  return `${accountId}|${String(hourStartMs).padStart(15, '0')}`;
}

export function markerId(accountId: string): string {
  return `${accountId}|built`;
}

/** The hour of a rollup `_id` (NaN for the marker). */
export function hourOf(id: string): number {
  return Number(id.slice(id.lastIndexOf('|') + 1));
}

/** Every hour document of the account, not its marker (':' sorts right after the digits). */
export function accountHours(accountId: string): { $gte: string; $lt: string } {
  return { $gte: `${accountId}|`, $lt: `${accountId}|:` };
}

/** The account's hours from `fromMs` on, and its marker ('~' sorts after 'built'). */
export function hoursFrom(accountId: string, fromMs: number): { $gte: string; $lte: string } {
  return { $gte: rollupId(accountId, fromMs), $lte: `${accountId}|~` };
}
