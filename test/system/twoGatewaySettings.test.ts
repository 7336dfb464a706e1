// Two gateways in one process, started with different realtime settings, each keep their own: an SSE
// stream's keep-alive period (SSE_KEEPALIVE_MS) and the check that ends a client token's streams once it
// expires (KEY_REVOCATION_CHECK_MS) are each gateway's, not the last started one's (issue 59).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createAccount, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, referenceBody } from '../support/payments';
import { startTestServer, type TestServer } from '../support/server';
import { openSse } from '../streams/support/sseClient';
import { mintToken } from '../clientTokens/support';

vi.setConfig({ testTimeout: 60_000 });

let engine: EmbeddedMongo;
let quick: TestServer;
let slow: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  // The quick gateway first: before each gateway held its own, the one started last set both periods.
  quick = await startTestServer({ MONGODB_URI: engine.uri, SSE_KEEPALIVE_MS: '300', KEY_REVOCATION_CHECK_MS: '100' });
  slow = await startTestServer({ MONGODB_URI: engine.uri, SSE_KEEPALIVE_MS: '600000', KEY_REVOCATION_CHECK_MS: '60000' });
  acct = await createAccount(quick.baseUrl);
}, 60_000);
afterAll(async () => {
  await slow?.stop();
  await quick?.stop();
  await engine?.close();
});

const keepAlives = (comments: string[]) => comments.filter((c) => c === 'keep-alive').length;

describe('two gateways in one process with their own realtime settings', () => {
  it("keep each stream alive at its own gateway's period", async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const open = (server: TestServer) => openSse(`${server.baseUrl}/v1/payment_intents/${payment.id}/events`, { authorization: `Bearer ${acct.sk}` });
    const onSlow = await open(slow);
    const onQuick = await open(quick);
    await onQuick.waitFor(() => keepAlives(onQuick.comments) >= 2);
    // Two of the quick gateway's periods have passed: the slow one's (10 min) has not.
    expect(keepAlives(onSlow.comments)).toBe(0);
    onQuick.close();
    onSlow.close();
  });

  it("end a client token's stream at its expiry by its own gateway's check", async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const minted = await mintToken(acct, payment.id, 60);
    const sse = await openSse(`${quick.baseUrl}/v1/public/payments/${payment.id}/events?client_token=${minted.token}`);
    expect(sse.status, sse.text).toBe(200);
    await sse.waitFor((m) => m.some((x) => x.event === 'snapshot'));
    // Past the token's expiry on the account's clock: the quick gateway's check (every 100 ms) ends it.
    await advanceClock(acct.api, 61);
    await sse.ended;
    expect(sse.comments).toContain('client token expired or revoked');
  });
});
