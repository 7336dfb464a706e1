// A dashboard session's subscription over SSE on POST /graphql (the cookie, same origin): signing out
// ends it at once with authentication_failed, as sign-out closes the session's WebSockets.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { signIn } from '../dashboard/sessionSupport';
import { referencePayment, UPDATES, within } from './httpSubscriptionSupport';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => {
  await server?.stop();
});

it("signing out ends the session's SSE subscription with authentication_failed, then complete", async () => {
  const acct = await createAccount(server.baseUrl);
  const payment = await referencePayment(acct);
  const { cookie } = await signIn(server.baseUrl, acct.sk);
  expect(cookie).toBeTruthy();
  const origin = server.baseUrl; // the gateway's own origin (PUBLIC_BASE_URL's default)
  const res = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { cookie: cookie!, origin, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: UPDATES, variables: { id: payment.id } }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const readUntil = async (what: string) => {
    while (!text.includes(what)) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  };
  await within('the snapshot', readUntil('"snapshot":true'));
  const out = await fetch(`${server.baseUrl}/dashboard/session`, { method: 'DELETE', headers: { cookie: cookie!, origin } });
  expect(out.status).toBe(200);
  await within('the end after sign-out', readUntil('event: complete'));
  const events = text.split('\n\n').filter((e) => e.startsWith('event: '));
  const last = JSON.parse(events.at(-2)!.slice('event: next\ndata: '.length));
  expect(last.errors[0]).toMatchObject({ message: 'dashboard session ended', extensions: { code: 'authentication_failed' } });
  expect(events.at(-1)).toBe('event: complete\ndata:');
});
