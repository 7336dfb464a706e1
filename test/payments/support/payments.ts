/**
 * What the payments suites import: the shared helpers of test/support (one definition each), under
 * the names these files have always used.
 */
export { createAccount, idempotencyKey, type TestAccount } from '../../support/accounts';
export {
  accountEvents,
  advanceClock as advance,
  createPayment,
  expectError,
  expressBody,
  getPayment,
  paymentEvents,
  referenceBody,
} from '../../support/payments';
export { startGatewayWithJobs as startPaymentsServer } from '../../support/server';
export { sleep, waitFor } from '../../support/wait';
