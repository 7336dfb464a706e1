import { expect, it, vi } from 'vitest';
import { createAccount } from '../support/accounts';
import { twoGatewaysOnOneDatabase } from '../support/twoGateways';
import { openSse } from '../streams/support/sseClient';
import { createPayment, referenceBody } from '../webhooks/support/webhooks';
import { openSocket } from './rawSocket';

/**
 * Issue 16, item 5: revoking a key did not end its open subscriptions (events kept arriving). Its
 * graphql-ws sockets now close with 4401 "api key revoked" and its SSE streams end, in the process that
 * revoked it at once and in another gateway process on the same database at its next check
 * (KEY_REVOCATION_CHECK_MS, 500 ms).
 *
 * The issue states the contract as "closed within a second", so each wait is bounded: 1.5 s, the
 * second plus room for a loaded 2-core machine running other suites. The waits themselves are
 * event-driven (the close and the stream's end), never sleeps.
 */
vi.setConfig({ testTimeout: 120_000 });
const CONTRACT_MS = 1_500;

const gateways = twoGatewaysOnOneDatabase();

function within<T>(what: string, p: Promise<T>): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${CONTRACT_MS} ms of the revocation`)), CONTRACT_MS)),
  ]);
}

const UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot paymentIntent { status } } }';

it.each([
  ['the gateway that revoked it', () => gateways.a.baseUrl],
  ['another gateway process on the same database', () => gateways.b.url],
])("a revoked key's subscription and SSE stream on %s end within a second", async (_where, url) => {
  const acct = await createAccount(gateways.a.baseUrl);
  const created = await acct.api.post('/api_keys', { name: 'watcher', permissions: ['payment_intents:read'] });
  expect(created.status, created.text).toBe(201);
  const key = created.body.secret as string;
  const pi = await createPayment(acct.api, referenceBody());

  const opened = await openSocket(url(), key);
  if (!opened.ok) throw new Error(`refused: ${JSON.stringify(opened)}`);
  opened.socket.subscribe('1', UPDATES, { id: pi.id });
  expect((await opened.socket.firstMessage('1')).type).toBe('next');
  const stream = await openSse(`${url()}/v1/payment_intents/${pi.id}/events`, { authorization: `Bearer ${key}` });
  expect(stream.status).toBe(200);
  await stream.waitFor((m) => m.some((x) => x.event === 'snapshot'));

  expect((await acct.api.delete(`/api_keys/${created.body.id}`)).status).toBe(200);
  const [closed] = await Promise.all([within('socket close', opened.socket.closed), within('stream end', stream.ended)]);
  expect(closed).toEqual({ code: 4401, reason: 'api key revoked' });
  expect(stream.comments).toContain('api key revoked');
  // And the key opens nothing new.
  expect(await openSocket(url(), key)).toMatchObject({ ok: false, code: 4401 });
});
