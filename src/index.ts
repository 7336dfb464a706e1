/**
 * Package entry: what integrators import. Today that is the receiver-side webhook check; the gateway
 * itself starts from src/main.ts.
 */
export {
  verifyWebhookSignature,
  computeWebhookSignature,
  parseSignatureHeader,
  WebhookSignatureError,
  type WebhookEvent,
  type WebhookSignatureFailure,
  type ParsedSignatureHeader,
} from './webhooks/verifySignature';
