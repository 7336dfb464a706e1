/**
 * What the request log's redaction (src/domain/logs/logBodies.ts, redact.ts) costs per body, in the
 * batch flush of every logged request: a typical 1 KB payment answer (no secret in it), a 1 KB GraphQL
 * request with a secret in its variables and document, and a list answer cut at the 5 KiB scan limit.
 * Microseconds of CPU per body (process.cpuUsage: other processes on a busy machine count less than
 * in wall time), the median of 7 rounds.
 *
 *   npx tsx bench/profile/logRedaction.ts
 *
 * LOG_REDACTION_MODULE: another logBodies module to time instead (an older version, to compare).
 */
export {};

const modulePath = process.env.LOG_REDACTION_MODULE ?? '../../src/domain/logs/logBodies';
const { loggedBody } = (await import(modulePath)) as { loggedBody: (text: string) => string | null };

const payment = {
  id: 'pi_3KfTzQ2eZvKYlo2C0a1b2c3d',
  object: 'payment_intent',
  amount: 125_000,
  currency: 'PKR',
  status: 'requires_confirmation',
  method: 'mobile_wallet',
  mobile: '923001234567',
  merchant_reference: 'order-2024-00077',
  description: 'Two tickets, row F, seats 11 and 12, evening show',
  metadata: { customer_id: 'cus_81237', cart: 'c_99812', channel: 'web', campaign: 'spring-sale' },
  reference: null,
  refunded_amount: 0,
  livemode: false,
  created_at: '2024-05-06T10:11:12.000Z',
  updated_at: '2024-05-06T10:11:12.000Z',
  next_action: { type: 'redirect', url: 'https://sandbox.example.com/pay/pi_3KfTzQ2eZvKYlo2C0a1b2c3d?return=https%3A%2F%2Fshop.example.com%2Fdone' },
  last_error: null,
  events: ['evt_1a', 'evt_1b', 'evt_1c'],
  capture_method: 'automatic',
  expires_at: '2024-05-06T10:26:12.000Z',
};
const bodies = {
  'payment answer, 1 KB, no secret': JSON.stringify(payment),
  'GraphQL request, 1 KB, secrets': JSON.stringify({
    query: `mutation Pay($input: CreatePaymentInput!, $token: String) { createPaymentIntent(input: $input) { id status amount } login(password: "hunter2") { ok } }`,
    variables: { token: 'ct_test_0123456789abcdefABCDEF0123456789', input: { amount: 125_000, currency: 'PKR', mobile: '923001234567', description: payment.description, metadata: payment.metadata } },
    operationName: 'Pay',
  }).padEnd(1024, ' '),
  'list answer, 20 KB (scans 5 KiB)': JSON.stringify({ object: 'list', data: Array.from({ length: 20 }, () => payment) }),
};

for (const [name, body] of Object.entries(bodies)) {
  const n = 20_000;
  const rounds: number[] = [];
  for (let round = 0; round < 7; round++) {
    const started = process.cpuUsage();
    for (let i = 0; i < n; i++) loggedBody(i % 2 === 0 ? body : `${body} `);
    const used = process.cpuUsage(started);
    rounds.push((used.user + used.system) / n);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(36)} ${body.length.toString().padStart(6)} chars  ${rounds[3]!.toFixed(2)} µs/body`);
}
