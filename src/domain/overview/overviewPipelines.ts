import type { PipelineStage } from 'mongoose';
import type { PaymentStatus } from '../payments/paymentStates';
import type { DeliveryState } from '../webhooks/deliveryStates';
import { lagBinExpression } from './lagHistogram';

/**
 * The overview's two aggregations. Each starts with a $match on the account and a range of creation
 * times, answered by an index that holds every field the rest reads (paymentModel.ts,
 * webhookDeliveryModel.ts), and groups per bucket and status in the database. Only operators the
 * embedded engine and MongoDB 6/7 both have: the bucket of a time is `floor((time - from) / width)` with
 * `$subtract $divide $floor`.
 */
export interface OverviewWindow {
  from: Date;
  to: Date;
  n: number;
  bucketMs: number;
}

/** The bucket of the time in `field`; `to` itself (created this very millisecond) goes to the last one. */
function bucketExpression(field: string, w: OverviewWindow): Record<string, unknown> {
  return { $min: [w.n - 1, { $floor: { $divide: [{ $subtract: [field, w.from] }, w.bucketMs] } }] };
}

export interface PaymentRow {
  _id: { b: number; s: PaymentStatus; m: string };
  n: number;
  amount: number;
}

export function paymentPipeline(accountId: string, w: OverviewWindow): PipelineStage[] {
  return [
    { $match: { account_id: accountId, created_at: { $gte: w.from, $lte: w.to } } },
    { $group: { _id: { b: bucketExpression('$created_at', w), s: '$status', m: '$payment_method' }, n: { $sum: 1 }, amount: { $sum: '$amount' } } },
  ];
}

export interface DeliveryRow {
  _id: { b: number; s: DeliveryState; l: number | null };
  n: number;
  /** The largest lag of the row (null when it has none). */
  max: number | null;
}

/**
 * Deliveries per bucket of their event's creation, state and lag bin. The lag is counted for delivered
 * ones that carry both times; an event made by a clock advance is stamped with the time its timer was
 * due, and its delivery may be attempted at the time before the advance, so a lag is never below 0.
 */
export function deliveryPipeline(accountId: string, w: OverviewWindow): PipelineStage[] {
  const hasLag = { $and: [{ $eq: ['$state', 'DELIVERED'] }, { $ifNull: ['$delivered_at', false] }, { $ifNull: ['$event_created_at', false] }] };
  const lag = { $cond: [hasLag, { $max: [0, { $subtract: ['$delivered_at', '$event_created_at'] }] }, null] };
  return [
    { $match: { account_id: accountId, event_created_at: { $gte: w.from, $lte: w.to } } },
    { $project: { _id: 0, state: 1, b: bucketExpression('$event_created_at', w), lag } },
    { $group: { _id: { b: '$b', s: '$state', l: { $cond: [{ $eq: ['$lag', null] }, null, lagBinExpression('$lag')] } }, n: { $sum: 1 }, max: { $max: '$lag' } } },
  ];
}

