// The dashboard session's cookie is a bearer secret, and the key it was opened with more so: neither
// shows in the gateway's JSON logs (captured from a gateway process logging every request at debug), in
// GET /v1/logs, or in any answer. Requests made with the session are the key's in the request log.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { answer, cookieGql, cookieWsClient, signIn } from './sessionSupport';

let engine: EngineProcess;
let gateway: GatewayProcess;
beforeAll(async () => {
  engine = await spawnEngine();
  gateway = await spawnGateway(engine.uri, { LOG_LEVEL: 'debug' });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
  await engine?.kill();
});

it('neither the cookie value nor the key is logged or answered', async () => {
  const acct = await createAccount(gateway.url);
  const signedIn = await signIn(gateway.url, acct.sk);
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.cookie!;
  const value = cookie.slice('pgw_session='.length);
  expect(signedIn.setCookie).not.toContain(acct.sk);
  // Set-Cookie is the one place the value is sent; no body carries it.
  const answers = [signedIn.text];
  answers.push((await fetch(`${gateway.url}/dashboard/session`, { headers: { cookie } }).then(answer)).text);
  answers.push((await cookieGql(gateway.url, cookie, '{ account { id } }')).text);
  answers.push((await cookieGql(gateway.url, cookie, '{ account { id } }', {}, { raw: { type: 'text/plain', body: '{}' } })).text);
  const client = cookieWsClient(gateway.url, cookie, gateway.url);
  answers.push(
    JSON.stringify(
      await new Promise((resolve) => {
        const stop = client.subscribe({ query: '{ account { id } }' }, { next: (m) => (stop(), resolve(m)), error: resolve, complete: () => undefined });
      }),
    ),
  );
  await client.dispose();
  answers.push((await fetch(`${gateway.url}/dashboard/session`, { method: 'DELETE', headers: { cookie } }).then(answer)).text);
  answers.push((await cookieGql(gateway.url, cookie, '{ account { id } }')).text); // 401 now
  for (const text of answers) {
    expect(text).not.toContain(acct.sk);
    expect(text).not.toContain(value);
  }

  // The request log: the session's GraphQL request is the key's (marked as the dashboard's, so listed on request).
  const logs = await waitFor(
    () => acct.api.get('/logs?limit=100&include_dashboard=true'),
    (r) => r.status === 200 && r.body.data.some((l: any) => l.path === '/graphql'),
  );
  expect(logs.text).not.toContain(value);

  // The process's JSON log lines of those requests.
  const output = await waitFor(
    async () => gateway.output(),
    (o) => o.split('\n').filter((l) => l.includes('/dashboard/session')).length >= 3,
    20_000,
  );
  expect(output).not.toContain(value);
  expect(output).not.toContain(acct.sk);
}, 120_000);
