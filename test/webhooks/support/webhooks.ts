/**
 * What the webhook suites import: the shared helpers of test/support (one definition each), under the
 * names these files have always used.
 */
export { advanceClock as advance, createPayment, expressBody, referenceBody } from '../../support/payments';
export { createEndpoint, deliveries } from '../../support/webhooks';
export { sleep, waitFor } from '../../support/wait';
