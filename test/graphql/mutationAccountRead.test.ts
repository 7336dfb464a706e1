import { Connection } from 'mongodb/lib/cmap/connection.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { type TestServer } from '../support/server';
import { gqlData } from './support';
import { sharedGateway } from '../support/server';

/**
 * The createPaymentIntent mutation reads the account no more often than POST /v1/payment_intents: the
 * admission's count already read the account's sandbox clock, and the request as admitted carries that
 * read to execute as REST's does (issue 44: no extra round trip for GraphQL). Of several mutation fields,
 * each reads it again, since an earlier one may have moved the clock.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

/**
 * The commands this thread sends on `accounts` while `work` runs (the gateway runs in this thread), up to
 * the payment's insert: what the request reads before it writes. Later reads are background work (the
 * webhook hook reads the account after the event is stored), whose batching with other reads of the
 * same turn makes their count vary from run to run.
 */
async function accountCommands(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  let inserted = false;
  const send = Connection.prototype.command;
  Connection.prototype.command = function recorded(this: Connection, ns, command, options, responseType) {
    const name = Object.keys(command)[0]!;
    if (name === 'insert' && command[name] === 'payment_intents') inserted = true;
    if (!inserted && command[name] === 'accounts') seen.push(name);
    return send.call(this, ns, command, options, responseType);
  };
  try {
    await work();
  } finally {
    Connection.prototype.command = send;
  }
  expect(inserted, 'the payment was inserted').toBe(true);
  return seen;
}

const CREATE = `mutation Create($input: CreatePaymentIntentInput!, $key: String!) {
  createPaymentIntent(input: $input, idempotencyKey: $key) { id createdAt }
}`;

describe('GraphQL createPaymentIntent and the account read', () => {
  it('sends the same commands on accounts as POST /v1/payment_intents', async () => {
    const { sk, api } = await createAccount(server.baseUrl);
    // Warm: the key is known to this process after its first request.
    await api.get('/account');
    const rest = await accountCommands(() => api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() }));
    const graphql = await accountCommands(() =>
      gqlData(server.baseUrl, sk, CREATE, { input: { amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' }, key: idempotencyKey() }),
    );
    expect(rest.length).toBeGreaterThan(0);
    expect(graphql).toEqual(rest);
  });

  it('a payment created after a clock advance in the same request is stamped with the advanced clock', async () => {
    const { sk } = await createAccount(server.baseUrl);
    const data = await gqlData(
      server.baseUrl,
      sk,
      `mutation Both($input: CreatePaymentIntentInput!, $key: String!) {
        advanceSandboxClock(input: { seconds: 86400 }) { now }
        createPaymentIntent(input: $input, idempotencyKey: $key) { createdAt }
      }`,
      { input: { amount: 1000, currency: 'AOA', paymentMethod: 'MULTICAIXA_REFERENCE' }, key: idempotencyKey() },
    );
    const created = Date.parse(data.createPaymentIntent.createdAt);
    // A day ahead of real time, as the clock the first field moved (not the admission's read).
    expect(created - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    expect(Math.abs(created - Date.parse(data.advanceSandboxClock.now))).toBeLessThan(60_000);
  });
});
