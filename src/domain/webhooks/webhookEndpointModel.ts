import type { components } from '../../../generated/openapi';
import mongoose, { Schema } from 'mongoose';
import type { ChaosReport, ChaosSettings } from './chaos';

/**
 * A webhook endpoint. Signing secrets must be usable for HMAC, so they cannot be hashed: they are
 * stored encrypted (`enc:v1:…`, secretBox.ts; plaintext `whsec_…` only in data written before that,
 * sealed at start-up); they never leave the service after the creation / rotation response and are
 * never logged.
 * `secrets` is newest first: after a rotation the previous secret stays, with `expires_at` 24 h later
 * (account clock), and both sign until then.
 */
export interface EndpointSecret {
  value: string;
  created_at: Date;
  /** Null for the current secret. */
  expires_at: Date | null;
}

export interface WebhookEndpointRecord {
  _id: string;
  account_id: string;
  /** As the caller gave it; null for a pull endpoint. */
  url: string | null;
  /** Absent on endpoints stored before pull endpoints existed: push. */
  mode?: 'push' | 'pull';
  /** Event types, or ['*']: only ever written from a validated request (the contract's WebhookEventFilter). */
  events: components['schemas']['WebhookEventFilter'][];
  name: string | null;
  description: string | null;
  secrets: EndpointSecret[];
  created_at: Date;
  /** Chaos switched on (chaos.ts); null or absent when off. */
  chaos?: ChaosSettings | null;
  /** What chaos did since it was last switched on: counters moved with `$inc` by every process. */
  chaos_report?: ChaosReport;
  /** The last recovery (POST …/recover, recoveryLock.ts): running, or cooling down, until `until`. */
  recovery?: EndpointRecovery | null;
}

export interface EndpointRecovery {
  running: boolean;
  /** Real ms: while running, when the run is taken for dead; after it, when the cooldown ends. */
  until: number;
  /** Real ms it started: names the run, so that only its own end ends it. */
  started: number;
}

const secretSchema = new Schema<EndpointSecret>(
  {
    value: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, default: null },
  },
  { _id: false, versionKey: false },
);

const endpointSchema = new Schema<WebhookEndpointRecord>(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    url: { type: String, default: null },
    mode: { type: String },
    events: { type: [String], required: true },
    name: { type: String, default: null },
    description: { type: String, default: null },
    secrets: { type: [secretSchema], required: true },
    created_at: { type: Date, required: true },
    chaos: { type: Schema.Types.Mixed, default: null },
    chaos_report: { type: Schema.Types.Mixed },
    recovery: { type: Schema.Types.Mixed, default: undefined },
  },
  { versionKey: false, minimize: false, collection: 'webhook_endpoints' },
);

// Matching endpoints for an event: account + (type or '*').
endpointSchema.index({ account_id: 1, events: 1 });
endpointSchema.index({ account_id: 1, created_at: -1 });
// Start-up: one sealed secret to check the key with, and the plaintext ones left to seal (ranges by prefix).
endpointSchema.index({ 'secrets.value': 1 });

export const WebhookEndpointModel = mongoose.model<WebhookEndpointRecord>('WebhookEndpoint', endpointSchema);
