// A client token is a secret: it never shows in GET /v1/logs, in the gateway's JSON logs (captured from a
// gateway process logging every request) or in any answer but the one that minted it. Logs name it by id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { gql } from '../graphql/support';
import { openSse } from '../streams/support/sseClient';
import { createExpressPayment, mintToken } from './support';

describe('client tokens stay secret', () => {
  let engine: EngineProcess;
  let gateway: GatewayProcess;
  let acct: TestAccount;

  beforeAll(async () => {
    engine = await spawnEngine();
    gateway = await spawnGateway(engine.uri, { LOG_LEVEL: 'debug' });
    acct = await createAccount(gateway.url);
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await engine?.kill();
  });

  it('in no log line, no request log entry, no error message; the log names the token id', async () => {
    const payment = await createExpressPayment(acct);
    const other = await createExpressPayment(acct);
    const minted = await mintToken(acct, payment.id);
    const { token } = minted;
    const anon = new ApiClient(gateway.url);
    const answers: string[] = [];
    const keep = (text: string) => answers.push(text);

    // Every way a token is sent: accepted, refused (other payment, key route, GraphQL beyond the view).
    keep((await anon.get(`/public/payments/${payment.id}?client_token=${token}`)).text);
    keep((await anon.get(`/public/payments/${other.id}?client_token=${token}`)).text);
    keep((await anon.get(`/public/payments/${other.id}/events?client_token=${token}`)).text);
    keep((await anon.get('/payment_intents', { key: token })).text);
    keep((await anon.get(`/events?client_token=${token}`)).text);
    keep((await anon.get(`/no/such/route?client_token=${token}`)).text);
    keep(JSON.stringify((await gql(gateway.url, token, `{ paymentIntent(id: "${payment.id}") { id } }`)).body));
    keep(JSON.stringify((await gql(gateway.url, token, `{ paymentIntent(id: "${payment.id}") { metadata } }`)).body));
    keep(JSON.stringify((await gql(gateway.url, token, `{ paymentIntent(id: "${other.id}") { id } }`)).body));
    const sse = await openSse(`${gateway.url}/v1/public/payments/${payment.id}/events?client_token=${token}`);
    await sse.waitFor((m) => m.length >= 1);
    sse.close();
    keep(sse.messages.map((m) => m.data).join('\n'));
    // Near-misses: a token one character off is not echoed either.
    const near = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    keep((await anon.get(`/public/payments/${payment.id}?client_token=${near}`)).text);

    const secretPart = token.slice('ct_test_'.length);
    for (const text of answers) {
      expect(text).not.toContain(secretPart);
      expect(text).not.toContain(near.slice('ct_test_'.length));
    }

    // The request log (written in batches, after the answers) holds the key's requests, never a token.
    const logs = await waitFor(
      () => acct.api.get('/logs?limit=100'),
      (r) => r.status === 200 && r.body.data.some((l: any) => l.path === '/v1/client_tokens'),
    );
    expect(logs.text).not.toContain(secretPart);
    expect(logs.text).not.toContain('client_token=');

    // The JSON log lines of those requests name the token by id, never by value.
    const output = await waitFor(
      async () => gateway.output(),
      (o) => o.split('\n').filter((l) => l.includes(minted.id)).length >= 5,
      20_000,
    );
    expect(output).not.toContain(secretPart);
    expect(output).not.toContain(near.slice('ct_test_'.length));
    const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const tokenLines = lines.filter((l) => l.clientTokenId === minted.id);
    expect(tokenLines.some((l) => l.path === `/v1/public/payments/${payment.id}` && l.status === 200)).toBe(true);
    expect(tokenLines.some((l) => l.path === '/graphql')).toBe(true);
    expect(tokenLines.some((l) => l.status === 403)).toBe(true);
  }, 120_000);
});
