import mongoose, { Schema } from 'mongoose';

/**
 * An event waiting for a pull endpoint (`mode: pull`): listed by GET .../pending until acknowledged.
 * `_id` is `<endpoint id>:<event id>`, so that creating it twice (the event hook run again after a crash)
 * leaves one; acknowledged ones stay (acked: true) until the TTL, so that a late second creation finds
 * them and does not make them pending again.
 */
export interface PendingEventRecord {
  _id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  /** The event's order (the events' `seq`), oldest first in the list. */
  event_seq: number;
  /** The exact Event JSON, as a webhook would carry it. */
  body: string;
  acked: boolean;
  /** Real time: the TTL's clock (30 days), whatever the sandbox clock says. */
  created_at: Date;
}

/** How long an event waits for its acknowledgement (contract-decisions.md, "Pull endpoints"). */
export const PENDING_TTL_SECONDS = 30 * 24 * 60 * 60;

const pendingSchema = new Schema<PendingEventRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    endpoint_id: { type: String, required: true },
    event_id: { type: String, required: true },
    event_seq: { type: Number, required: true },
    body: { type: String, required: true },
    acked: { type: Boolean, required: true, default: false },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false, collection: 'webhook_pending_events' },
);

// The pending list: an endpoint's unacknowledged events in event order (and the ack's conditional update).
pendingSchema.index({ endpoint_id: 1, acked: 1, event_seq: 1 });
pendingSchema.index({ created_at: 1 }, { expireAfterSeconds: PENDING_TTL_SECONDS });

export const PendingEventModel = mongoose.model<PendingEventRecord>('PendingEvent', pendingSchema);
