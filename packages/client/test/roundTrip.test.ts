import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../../test/support/receiver';
import { constructEvent, createClient, type PgwClient } from '../src/index';
import { operations } from '../src/generated/operations';
import { recordingFetch } from './recordingFetch';
import { useGateway } from './support';

/**
 * Every operation of openapi.yaml, called through @pgw/client against the real gateway. The set of
 * operations that answered 2xx (recorded in the fetch, not declared by the test) must equal the set in
 * the contract: a new route without a client call here fails this file. Every JSON answer is also held
 * to the contract.
 */
describe('@pgw/client round trip: every operation of openapi.yaml', () => {
  const gw = useGateway();
  const rec = recordingFetch();
  let receiver: Receiver;
  let anon: PgwClient;
  let pgw: PgwClient;

  beforeAll(async () => {
    receiver = await startReceiver();
    anon = createClient({ baseUrl: gw.server.baseUrl, fetch: rec.fetch });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('account, keys, methods, clock', async () => {
    const { data: account } = await anon.POST('/sandbox/accounts', { body: { name: 'round trip' } });
    pgw = createClient({ baseUrl: gw.server.baseUrl, apiKey: account.sk, fetch: rec.fetch });
    expect((await pgw.GET('/account')).data.id).toBe(account.id);

    const { data: key } = await pgw.POST('/api_keys', { body: { name: 'reader', permissions: ['payment_intents:read'] } });
    expect(key.secret).toMatch(/^sk_test_|^rk_test_/);
    expect((await pgw.GET('/api_keys')).data.data.map((k) => k.id)).toContain(key.id);
    expect((await pgw.DELETE('/api_keys/{id}', { params: { path: { id: key.id } } })).data.revoked_at).not.toBeNull();

    const { data: methods } = await pgw.GET('/payment_methods');
    expect(methods.data.map((m) => m.code)).toContain('multicaixa_express');

    const { data: clock } = await pgw.GET('/sandbox/clock');
    const { data: advanced } = await pgw.POST('/sandbox/clock/advance', { body: { seconds: 60 } });
    expect(advanced.offset_seconds).toBe(clock.offset_seconds + 60);
  });

  it('payment intents, reference payment, refunds, client tokens and both streams', async () => {
    const { data: express } = await pgw.POST('/payment_intents', {
      body: { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
    });
    expect((await pgw.GET('/payment_intents/{id}', { params: { path: { id: express.id } } })).data.status).toBeTypeOf('string');
    const { data: list } = await pgw.GET('/payment_intents', { params: { query: { limit: 10 } } });
    expect(list.data.map((p) => p.id)).toContain(express.id);

    const { data: toCancel } = await pgw.POST('/payment_intents', { body: { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' } });
    expect((await pgw.POST('/payment_intents/{id}/cancel', { params: { path: { id: toCancel.id } } })).data.status).toBe('CANCELLED');

    const { data: ref } = await pgw.POST('/payment_intents', { body: { amount: 2000, currency: 'AOA', payment_method: 'multicaixa_reference' } });
    const { data: paid } = await pgw.POST('/sandbox/simulate/reference_paid', { body: { reference: ref.reference!.number } });
    expect(paid.status).toBe('SUCCEEDED');

    // A finished payment's stream is its snapshot, then the end: read as text.
    const { data: stream } = await pgw.GET('/payment_intents/{id}/events', { params: { path: { id: ref.id } }, parseAs: 'text' });
    expect(stream).toContain('event: snapshot');

    const { data: refund } = await pgw.POST('/refunds', { body: { payment_intent: ref.id, amount: 500 } });
    expect((await pgw.GET('/refunds/{id}', { params: { path: { id: refund.id } } })).data.amount).toBe(500);

    const { data: token } = await pgw.POST('/client_tokens', { body: { payment_intent: ref.id } });
    const query = { client_token: token.token };
    expect((await anon.GET('/public/payments/{id}', { params: { path: { id: ref.id }, query } })).data.id).toBe(ref.id);
    const { data: publicStream } = await anon.GET('/public/payments/{id}/events', { params: { path: { id: ref.id }, query }, parseAs: 'text' });
    expect(publicStream).toContain('event: snapshot');
    expect((await pgw.DELETE('/client_tokens/{id}', { params: { path: { id: token.id } } })).data.deleted).toBe(true);
  });

  it('trusted GraphQL documents and the GraphQL settings', async () => {
    const body = 'query RoundTrip { account { id } }';
    const id = createHash('sha256').update(body).digest('hex');
    const { data: registered } = await pgw.POST('/graphql/documents', { body: { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id, body }] } });
    expect(registered.data.map((d) => d.id)).toEqual([`sha256:${id}`]);
    expect((await pgw.GET('/graphql/documents', { params: { query: { limit: 5 } } })).data.data[0]?.name).toBe('RoundTrip');
    const { data: settings } = await pgw.PUT('/graphql/settings', { body: { trusted_documents: { client_token: 'enforce' } } });
    expect(settings.trusted_documents.client_token).toBe('enforce');
    expect((await pgw.GET('/graphql/settings')).data.trusted_documents).toEqual(settings.trusted_documents);
    expect((await pgw.DELETE('/graphql/documents/{id}', { params: { path: { id: `sha256:${id}` } } })).data.deleted).toBe(true);
  });

  it('payment links, QR codes, checkout sessions, their public JSON and pages', async () => {
    const { data: link } = await pgw.POST('/payment_links', { body: { amount: 3000, description: 'Round trip' } });
    expect((await pgw.GET('/payment_links/{id}', { params: { path: { id: link.id } } })).data.code).toBe(link.code);
    expect((await pgw.GET('/payment_links')).data.data.map((l) => l.id)).toContain(link.id);
    expect((await pgw.GET('/payment_links/{id}/qr', { params: { path: { id: link.id } }, parseAs: 'text' })).data).toContain('<svg');
    expect((await pgw.POST('/qr_codes', { body: { payment_link: link.code } })).data.object).toBe('qr_code');

    const code = { code: link.code };
    expect((await anon.GET('/public/payment_links/{code}', { params: { path: code } })).data.amount).toBe(3000);
    const { data: linkPayment } = await anon.POST('/public/payment_links/{code}/payments', {
      params: { path: code },
      body: { payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
    });
    expect(linkPayment.amount).toBe(3000);
    expect((await anon.GET('/pay/{code}', { params: { path: code }, parseAs: 'text' })).data).toContain('Mobile number');
    expect((await pgw.DELETE('/payment_links/{id}', { params: { path: { id: link.id } } })).data.active).toBe(false);

    const { data: session } = await pgw.POST('/checkout/sessions', {
      body: { amount: 4000, success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/cancel' },
    });
    expect((await pgw.GET('/checkout/sessions/{id}', { params: { path: { id: session.id } } })).data.status).toBe('OPEN');
    const id = { id: session.id };
    expect((await anon.GET('/public/checkout/sessions/{id}', { params: { path: id } })).data.amount).toBe(4000);
    const { data: sessionPayment } = await anon.POST('/public/checkout/sessions/{id}/payments', {
      params: { path: id },
      body: { payment_method: 'multicaixa_reference' },
    });
    expect(sessionPayment.amount).toBe(4000);
    expect((await anon.GET('/checkout/{id}', { params: { path: id }, parseAs: 'text' })).data).toContain('<html');
  });

  it('webhook endpoints: test event, deliveries, retry, rotation (real deliveries verified with constructEvent)', async () => {
    const { data: endpoint } = await pgw.POST('/webhook_endpoints', { body: { url: `${receiver.url}/hook`, events: ['payment.succeeded'] } });
    expect((await pgw.GET('/webhook_endpoints')).data.data.map((e) => e.id)).toContain(endpoint.id);
    const path = { id: endpoint.id };

    const { data: queued } = await pgw.POST('/webhook_endpoints/{id}/test', { params: { path } });
    const isPing = (r: { headers: Record<string, unknown> }) => r.headers['service-event-id'] === queued.event_id;
    const [first] = await receiver.waitFor(isPing);
    const event = constructEvent(first!.rawBody, first!.headers['service-signature'] as string, endpoint.secret);
    expect(event.type).toBe('test.ping');

    const { data: deliveries } = await pgw.GET('/webhook_endpoints/{id}/deliveries', { params: { path } });
    const delivery = deliveries.data.find((d) => d.event_id === queued.event_id)!;
    const { data: retried } = await pgw.POST('/webhook_endpoints/{id}/deliveries/{delivery_id}/retry', {
      params: { path: { id: endpoint.id, delivery_id: delivery.id } },
    });
    expect(retried.state).toBe('DELIVERED');
    await receiver.waitFor(isPing, 2);

    // After a rotation the header carries the new and the old signature: either secret verifies.
    const { data: rotated } = await pgw.POST('/webhook_endpoints/{id}/rotate_secret', { params: { path } });
    const { data: again } = await pgw.POST('/webhook_endpoints/{id}/test', { params: { path } });
    const [afterRotation] = await receiver.waitFor((r) => r.headers['service-event-id'] === again.event_id);
    const header = afterRotation!.headers['service-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(constructEvent(afterRotation!.rawBody, header, [rotated.secret]).id).toBe(again.event_id);
    expect(constructEvent(afterRotation!.rawBody, header, endpoint.secret).id).toBe(again.event_id);

    expect((await pgw.DELETE('/webhook_endpoints/{id}', { params: { path } })).data.deleted).toBe(true);
  });

  it('webhook lab: chaos settings, a pull endpoint\'s pending events and their acknowledgement, recover', async () => {
    const { data: push } = await pgw.POST('/webhook_endpoints', { body: { url: `${receiver.url}/lab`, events: ['test.ping'] } });
    const path = { id: push.id };
    const { data: chaos } = await pgw.PUT('/webhook_endpoints/{id}/chaos', { params: { path }, body: { duplicate: 0.5, seed: 7 } });
    expect(chaos).toMatchObject({ object: 'webhook_chaos', duplicate: 0.5, seed: 7 });
    expect((await pgw.GET('/webhook_endpoints/{id}/chaos', { params: { path } })).data.seed).toBe(7);
    expect((await pgw.DELETE('/webhook_endpoints/{id}/chaos', { params: { path } })).data.object).toBe('webhook_chaos');
    const { data: recovery } = await pgw.POST('/webhook_endpoints/{id}/recover', { params: { path }, body: { since: new Date(0).toISOString() } });
    expect(recovery).toEqual({ object: 'recovery', deliveries: 0 });

    const { data: pull } = await pgw.POST('/webhook_endpoints', { body: { mode: 'pull' } });
    expect(pull).toMatchObject({ mode: 'pull', url: null });
    const pullPath = { id: pull.id };
    const { data: ping } = await pgw.POST('/webhook_endpoints/{id}/test', { params: { path: pullPath } });
    const waiting = async () => (await pgw.GET('/webhook_endpoints/{id}/pending', { params: { path: pullPath } })).data.data.map((e) => e.id);
    for (let i = 0; i < 100 && !(await waiting()).includes(ping.event_id); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await waiting()).toEqual([ping.event_id]);
    const { data: ack } = await pgw.POST('/webhook_endpoints/{id}/pending/ack', { params: { path: pullPath }, body: { ids: [ping.event_id] } });
    expect(ack).toEqual({ object: 'acknowledgement', acknowledged: 1 });
    expect(await waiting()).toEqual([]);
  });

  it('events, logs, health, readiness, metrics and the documents', async () => {
    const { data: events } = await pgw.GET('/events', { params: { query: { limit: 5 } } });
    expect(events.data.length).toBeGreaterThan(0);
    expect((await pgw.GET('/logs', { params: { query: { limit: 5 } } })).data.data.length).toBeGreaterThan(0);
    expect((await anon.GET('/healthz')).data.status).toBe('ok');
    expect((await anon.GET('/readyz')).data.status).toBe('ok');
    expect((await anon.GET('/metrics', { parseAs: 'text' })).data).toContain('# TYPE pgw_http_requests_total counter');
    expect((await anon.GET('/openapi.yaml', { parseAs: 'text' })).data).toContain('openapi:');
    expect((await anon.GET('/openapi.json')).data).toHaveProperty('paths');
    expect((await anon.GET('/docs', { parseAs: 'text' })).data).toContain('<html');
  });

  it('sandbox reset, last: it deletes what the tests above made', async () => {
    const { data: reset } = await pgw.POST('/sandbox/reset');
    expect(reset.object).toBe('sandbox_reset');
    expect(reset.deleted.payment_intents).toBeGreaterThan(0);
    expect((await pgw.GET('/payment_intents')).data.data).toEqual([]);
  });

  it('exercised exactly the operations of the contract, and every JSON answer matched it', () => {
    expect([...rec.succeeded].sort()).toEqual(Object.keys(operations).sort());
    expect(rec.violations).toEqual([]);
  });
});
