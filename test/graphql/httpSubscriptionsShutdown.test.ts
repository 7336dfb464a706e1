// Gateway shutdown with subscriptions open over HTTP: each stream is ended the way its client retries
// (a graphql-sse stream without `complete`, a multipart one with a transport error and the close
// delimiter) instead of holding the server until the grace period ends.
import { expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer } from '../support/server';
import { referencePayment, UPDATES, within } from './httpSubscriptionSupport';

it('ends open SSE and multipart subscriptions and stops, well inside a grace it could have used', async () => {
  // A grace longer than the test's own timeout: a stop that waited for the streams would fail the test.
  const server = await startTestServer({ SHUTDOWN_GRACE_MS: '600000' });
  const acct = await createAccount(server.baseUrl);
  const payment = await referencePayment(acct);
  const open = (accept: string) =>
    fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: UPDATES, variables: { id: payment.id } }),
    });
  const sse = await open('text/event-stream');
  const multipart = await open('multipart/mixed;subscriptionSpec=1.0');
  expect([sse.status, multipart.status]).toEqual([200, 200]);
  const [sseText, multipartText] = [sse.text(), multipart.text()];
  expect(server.gateway.graphql.httpSubscriptions.count()).toBe(2);

  await within('the gateway stop', server.stop(), 60_000);

  const sseBody = await within('the SSE end', sseText);
  expect(sseBody).toContain('event: next');
  // No `complete`: graphql-sse's client takes the end for a network fault and subscribes again.
  expect(sseBody).not.toContain('event: complete');
  expect(sseBody).toContain(': server restarting; subscribe again');
  const multipartBody = await within('the multipart end', multipartText);
  expect(multipartBody.endsWith('\r\n--graphql--\r\n')).toBe(true);
  const parts = multipartBody.split('\r\n--graphql').slice(1, -1);
  const last = JSON.parse(parts.at(-1)!.slice(parts.at(-1)!.indexOf('\r\n\r\n') + 4));
  expect(last).toEqual({ payload: null, errors: [{ message: 'server restarting; subscribe again', extensions: { code: 'service_unavailable' } }] });
  expect(server.gateway.graphql.httpSubscriptions.count()).toBe(0);
});
