/** `@pgw/client/webhooks`: the receiver-side helpers alone (node:crypto only, no HTTP client). */
export {
  verifyWebhookSignature,
  computeWebhookSignature,
  parseSignatureHeader,
  WebhookSignatureError,
  type WebhookEvent,
  type WebhookSignatureFailure,
  type ParsedSignatureHeader,
} from './signature.js';
export { standardWebhookHeaders, standardWebhookSignature, standardWebhookKey, verifyStandardWebhook, type StandardWebhookRequestHeaders } from './standardWebhooks.js';
export { constructEvent, type ConstructEventOptions } from './constructEvent.js';
export { isEventType, type Event, type EventType, type EventOf } from './events.js';
