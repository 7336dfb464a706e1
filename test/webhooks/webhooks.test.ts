import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhookSignature, WebhookSignatureError } from '@pgw/client';
import { createAccount, type TestAccount } from '../support/accounts';
import { useGatewayAndReceiver } from './support/gateway';
import { advance, createEndpoint, createPayment, deliveries, expressBody, referenceBody, waitFor } from './support/webhooks';

const gw = useGatewayAndReceiver({}, { jobs: true });
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
  gw.receiver.reply = () => ({ status: 200 });
});

const forEvent = (id: string) => (r: { headers: Record<string, unknown> }) => r.headers['service-event-id'] === id;
const hookUrl = (name: string) => `${gw.receiver.url}/hooks/${name}`;
const atPath = (name: string) => (r: { path: string }) => r.path === `/hooks/${name}`;

describe('webhook endpoints', () => {
  it('returns the whsec_ secret at creation only, lists and deletes endpoints', async () => {
    const { api } = account;
    const created = await createEndpoint(api, hookUrl('crud'), { events: ['payment.succeeded'], name: 'Shop', description: 'Orders' });
    expect(created).toMatchObject({ object: 'webhook_endpoint', url: hookUrl('crud'), events: ['payment.succeeded'], name: 'Shop', description: 'Orders' });
    expect(created.id).toMatch(/^whe_[0-9A-Za-z]{24}$/);
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z+/]{43}=$/);

    const all = await createEndpoint(api, hookUrl('crud-all'));
    expect(all.events).toEqual(['*']);
    expect(all.name).toBeNull();

    const list = await api.get('/webhook_endpoints');
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.id).sort()).toEqual([created.id, all.id].sort());
    expect(list.text).not.toContain('whsec_');
    expect(list.body.data.every((e: any) => !('secret' in e))).toBe(true);

    const del = await api.delete(`/webhook_endpoints/${created.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
    expect((await api.delete(`/webhook_endpoints/${created.id}`)).status).toBe(404);
    expect((await api.get(`/webhook_endpoints/${created.id}/deliveries`)).status).toBe(404);
    expect((await api.get('/webhook_endpoints')).body.data.map((e: any) => e.id)).toEqual([all.id]);

    // Another account sees none of it.
    const other = await createAccount(gw.server.baseUrl);
    expect((await other.api.get(`/webhook_endpoints/${all.id}/deliveries`)).status).toBe(404);
    expect((await other.api.post(`/webhook_endpoints/${all.id}/test`)).status).toBe(404);
    expect((await other.api.get('/webhook_endpoints')).body.data).toEqual([]);
  });

  it('refuses URLs that are not absolute http(s)', async () => {
    for (const url of ['ftp://example.com/x', 'not a url', '/relative/path']) {
      const res = await account.api.post('/webhook_endpoints', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });
});

describe('signed deliveries', () => {
  it('POSTs the exact Event JSON, signed so that the helper and an independent HMAC both verify it', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('signed'));
    const pi = await createPayment(api, referenceBody(30_000));
    const [req] = await gw.receiver.waitFor((r) => atPath('signed')(r) && JSON.parse(r.rawBody).type === 'payment.created');
    const r = req!;

    expect(r.method).toBe('POST');
    expect(r.headers['content-type']).toBe('application/json');
    const event = JSON.parse(r.rawBody);
    expect(event).toMatchObject({ object: 'event', type: 'payment.created', livemode: false, data: { id: pi.id, status: 'PENDING' } });
    expect(r.headers['service-event-id']).toBe(event.id);

    // The body is exactly the Event resource as GET /events shows it.
    const listed = (await api.get('/events?limit=100')).body.data.find((e: any) => e.id === event.id);
    expect(event).toEqual(listed);

    // Independent check of the header format and the HMAC.
    const header = String(r.headers['service-signature']);
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(m, header).not.toBeNull();
    const t = Number(m![1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
    const expected = createHmac('sha256', endpoint.secret).update(`${t}.${r.rawBody}`).digest('hex');
    expect(m![2]).toBe(expected);

    // The helper accepts it (string or Buffer) and returns the event.
    expect(verifyWebhookSignature(r.rawBody, header, endpoint.secret).id).toBe(event.id);
    expect(verifyWebhookSignature(Buffer.from(r.rawBody), header, [endpoint.secret]).data.id).toBe(pi.id);

    const reason = (fn: () => unknown) => {
      try {
        fn();
        return 'accepted';
      } catch (err) {
        return err instanceof WebhookSignatureError ? err.reason : String(err);
      }
    };
    expect(reason(() => verifyWebhookSignature(r.rawBody.replace('"amount":30000', '"amount":1'), header, endpoint.secret))).toBe('signature_mismatch');
    expect(reason(() => verifyWebhookSignature(r.rawBody, header, 'whsec_wrong'))).toBe('signature_mismatch');
    expect(reason(() => verifyWebhookSignature(r.rawBody, header, endpoint.secret, 600, t + 601))).toBe('timestamp_out_of_tolerance');
    expect(reason(() => verifyWebhookSignature(r.rawBody, header.replace('t=', 'ts='), endpoint.secret))).toBe('malformed_header');
    expect(reason(() => verifyWebhookSignature(r.rawBody, `t=${t}`, endpoint.secret))).toBe('malformed_header');

    // GET /deliveries shows the exact body and signature header of that attempt.
    const [d] = await waitFor(
      () => deliveries(api, endpoint.id),
      (list) => list.some((x) => x.event_id === event.id && x.state === 'DELIVERED'),
    ).then((list) => list.filter((x) => x.event_id === event.id));
    expect(d).toMatchObject({ object: 'webhook_delivery', event_type: 'payment.created', state: 'DELIVERED', attempts: 1, last_status: 200 });
    expect(d.id).toMatch(/^whd_/);
    expect(d.request_body).toBe(r.rawBody);
    expect(d.signature_header).toBe(header);
    expect(d.last_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(d.last_attempt_at)).not.toBeNaN();
  });

  it('sends only the subscribed types, one delivery per event and endpoint, newest first', async () => {
    const { api } = account;
    const onlySucceeded = await createEndpoint(api, hookUrl('filtered'), { events: ['payment.succeeded'] });
    const everything = await createEndpoint(api, hookUrl('everything'), { events: ['*'] });
    const pi = await createPayment(api, referenceBody(40_000));
    const paid = await api.post('/sandbox/simulate/reference_paid', { reference: pi.reference.number });
    expect(paid.status).toBe(200);

    const all = await gw.receiver.waitFor(atPath('everything'), 3);
    expect(all.map((r) => JSON.parse(r.rawBody).type)).toEqual(['payment.created', 'reference.paid', 'payment.succeeded']);
    const filtered = await gw.receiver.waitFor(atPath('filtered'), 1);
    expect(JSON.parse(filtered[0]!.rawBody).data).toMatchObject({ id: pi.id, status: 'SUCCEEDED' });

    const list = await waitFor(() => deliveries(api, everything.id), (l) => l.length === 3 && l.every((d) => d.state === 'DELIVERED'));
    expect(list.map((d) => d.event_type)).toEqual(['payment.succeeded', 'reference.paid', 'payment.created']);
    // An event's deliveries to all its endpoints are written together before any is attempted, so with
    // the three above delivered, the filtered endpoint's rows are final: one, delivered once.
    const [only] = await waitFor(() => deliveries(api, onlySucceeded.id), (l) => l.length === 1 && l[0].state === 'DELIVERED');
    expect(only).toMatchObject({ event_type: 'payment.succeeded', attempts: 1 });
    expect(gw.receiver.received.filter(atPath('filtered')).map((r) => JSON.parse(r.rawBody).type)).toEqual(['payment.succeeded']);
  });

  it('test.ping goes to that endpoint only, whatever its filter, and appears in GET /events', async () => {
    const { api } = account;
    const target = await createEndpoint(api, hookUrl('ping-target'), { events: ['refund.succeeded'] });
    const bystander = await createEndpoint(api, hookUrl('ping-bystander'));
    const res = await api.post(`/webhook_endpoints/${target.id}/test`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'test_event', state: 'QUEUED' });
    expect(res.body.event_id).toMatch(/^evt_/);

    const [ping] = await gw.receiver.waitFor(forEvent(res.body.event_id));
    expect(ping!.path).toBe('/hooks/ping-target');
    const event = JSON.parse(ping!.rawBody);
    expect(event).toMatchObject({ id: res.body.event_id, type: 'test.ping', object: 'event' });
    expect(typeof event.data.message).toBe('string');
    expect(verifyWebhookSignature(ping!.rawBody, String(ping!.headers['service-signature']), target.secret).type).toBe('test.ping');
    // The event's deliveries (to every endpoint it matches) are written together before any attempt:
    // once the target's is recorded delivered, the bystander's rows are final too.
    const [delivered] = await waitFor(
      async () => (await deliveries(api, target.id)).filter((d) => d.event_id === res.body.event_id),
      (l) => l[0]?.state === 'DELIVERED',
    );
    expect(delivered).toMatchObject({ attempts: 1 });
    expect((await deliveries(api, bystander.id)).filter((d) => d.event_id === res.body.event_id)).toEqual([]);
    expect(gw.receiver.received.filter(forEvent(res.body.event_id))).toHaveLength(1);

    const events = (await api.get('/events')).body.data;
    expect(events.some((e: any) => e.id === res.body.event_id && e.type === 'test.ping')).toBe(true);
    expect((await api.post('/webhook_endpoints/whe_000000000000000000000000/test')).status).toBe(404);
  });
});

describe('retries', () => {
  it('a receiver answering 500 gets attempts at +10 s, +60 s and +5 min, then the delivery is DEAD_LETTER', async () => {
    const { api } = account;
    gw.receiver.reply = (r) => (atPath('failing')(r) ? { status: 500 } : { status: 200 });
    const endpoint = await createEndpoint(api, hookUrl('failing'));
    const ping = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;

    const delivery = async () => (await deliveries(api, endpoint.id)).find((d) => d.event_id === ping.event_id);
    let d = await waitFor(delivery, (x) => x?.attempts === 1);
    expect(d).toMatchObject({ state: 'RETRYING', attempts: 1, last_status: 500 });
    const times = [Date.parse(d.last_attempt_at)];

    // Nothing happens before the retry is due. Real time also moves the account clock, so aim at
    // "first attempt + 9 s" from wherever the clock is now (a loaded machine may already be past it).
    const clockNow = async () => Date.parse((await api.get('/sandbox/clock')).body.now);
    const untilNine = Math.floor((times[0]! + 9_000 - (await clockNow())) / 1000);
    if (untilNine >= 1) {
      // The advance answers once every timer due in its span has fired: no wait needed after it.
      await advance(api, untilNine);
      expect((await delivery()).attempts).toBe(1);
    } else {
      console.warn('[webhooks.test] the machine was too slow to observe the +9 s window; checking the gaps only');
    }

    for (const [gap, attempts] of [[10, 2], [60, 3], [300, 4]] as const) {
      // Move the clock to the previous attempt + gap (at least one second).
      const seconds = Math.max(1, Math.ceil((times[times.length - 1]! + gap * 1000 - (await clockNow())) / 1000));
      await advance(api, seconds);
      d = await waitFor(delivery, (x) => x?.attempts === attempts);
      times.push(Date.parse(d.last_attempt_at));
      expect(d.last_status).toBe(500);
      expect(d.state).toBe(attempts < 4 ? 'RETRYING' : 'DEAD_LETTER');
    }
    // Gaps between attempts, in account time: 10 s, 60 s, 5 min (a little slack for the first attempt's own latency).
    const gaps = times.slice(1).map((t, i) => (t - times[i]!) / 1000);
    expect(gaps[0]).toBeGreaterThanOrEqual(10);
    expect(gaps[0]).toBeLessThan(11);
    expect(gaps[1]).toBe(60);
    expect(gaps[2]).toBe(300);

    expect(gw.receiver.received.filter(forEvent(ping.event_id))).toHaveLength(4);
    // Every attempt signs afresh with the same body.
    const bodies = new Set(gw.receiver.received.filter(forEvent(ping.event_id)).map((r) => r.rawBody));
    expect(bodies.size).toBe(1);

    // No fifth automatic attempt, however far the clock moves (the advance answers once every timer due
    // in its span has fired, attempts included).
    await advance(api, 3600);
    expect(gw.receiver.received.filter(forEvent(ping.event_id))).toHaveLength(4);
    expect(await delivery()).toMatchObject({ state: 'DEAD_LETTER', attempts: 4 });

    // A manual retry sends it again now, whatever the state.
    gw.receiver.reply = () => ({ status: 204 });
    const retried = await api.post(`/webhook_endpoints/${endpoint.id}/deliveries/${d.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: d.id, state: 'DELIVERED', attempts: 5, last_status: 204 });
    expect(gw.receiver.received.filter(forEvent(ping.event_id))).toHaveLength(5);
    expect((await api.post(`/webhook_endpoints/${endpoint.id}/deliveries/whd_000000000000000000000000/retry`)).status).toBe(404);
  });

  it('a receiver that takes 6 s gives last_status 0 (no answer within 5 s)', async () => {
    const { api } = account;
    gw.receiver.reply = (r) => (atPath('slow')(r) ? { status: 200, delayMs: 6_000 } : { status: 200 });
    const endpoint = await createEndpoint(api, hookUrl('slow'));
    const ping = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    const d = await waitFor(
      async () => (await deliveries(api, endpoint.id)).find((x) => x.event_id === ping.event_id),
      (x) => x?.attempts === 1,
      15_000,
    );
    expect(d).toMatchObject({ state: 'RETRYING', last_status: 0 });
    expect(d.last_ms).toBeGreaterThanOrEqual(4_900);
    expect(d.last_ms).toBeLessThan(6_000);
  });

  it('redirects are not followed: a 3xx is a failed attempt', async () => {
    const { api } = account;
    gw.receiver.reply = (r) => (atPath('redirect')(r) ? { status: 302, headers: { location: hookUrl('elsewhere') } } : { status: 200 });
    const endpoint = await createEndpoint(api, hookUrl('redirect'));
    const ping = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    const d = await waitFor(async () => (await deliveries(api, endpoint.id))[0], (x) => x?.attempts === 1);
    expect(d).toMatchObject({ event_id: ping.event_id, state: 'RETRYING', last_status: 302 });
    expect(gw.receiver.received.filter(atPath('elsewhere'))).toHaveLength(0);
  });

  it('deleting an endpoint deletes its deliveries and cancels its pending retries', async () => {
    const { api } = account;
    gw.receiver.reply = (r) => (atPath('deleted')(r) ? { status: 503 } : { status: 200 });
    const endpoint = await createEndpoint(api, hookUrl('deleted'));
    const ping = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    await waitFor(async () => (await deliveries(api, endpoint.id))[0], (x) => x?.state === 'RETRYING');
    expect((await api.delete(`/webhook_endpoints/${endpoint.id}`)).status).toBe(200);
    // The advance answers once every timer due in its span has fired: a retry left behind would have
    // reached the receiver by then.
    await advance(api, 600);
    expect(gw.receiver.received.filter(forEvent(ping.event_id))).toHaveLength(1);
  });

  it('a receiver that recovers gets the retry and the delivery ends DELIVERED', async () => {
    const { api } = account;
    let fail = true;
    gw.receiver.reply = (r) => (atPath('recovers')(r) && fail ? { status: 500 } : { status: 200 });
    const endpoint = await createEndpoint(api, hookUrl('recovers'));
    await api.post(`/webhook_endpoints/${endpoint.id}/test`);
    await waitFor(async () => (await deliveries(api, endpoint.id))[0], (x) => x?.state === 'RETRYING');
    fail = false;
    await advance(api, 10);
    const d = await waitFor(async () => (await deliveries(api, endpoint.id))[0], (x) => x?.state === 'DELIVERED');
    expect(d).toMatchObject({ attempts: 2, last_status: 200 });
  });
});

describe('secret rotation', () => {
  it('signs with the new and the old secret for 24 h (new first), then with the new one only', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('rotate'));
    const rotated = await api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: endpoint.id, object: 'webhook_endpoint' });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect((await api.get('/webhook_endpoints')).text).not.toContain('whsec_');

    const ping1 = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    const [r1] = await gw.receiver.waitFor(forEvent(ping1.event_id));
    const header1 = String(r1!.headers['service-signature']);
    const [, t, v1new, v1old] = /^t=(\d+),v1=([0-9a-f]{64}),v1=([0-9a-f]{64})$/.exec(header1) ?? [];
    expect(v1new).toBe(createHmac('sha256', rotated.body.secret).update(`${t}.${r1!.rawBody}`).digest('hex'));
    expect(v1old).toBe(createHmac('sha256', endpoint.secret).update(`${t}.${r1!.rawBody}`).digest('hex'));
    expect(verifyWebhookSignature(r1!.rawBody, header1, endpoint.secret).id).toBe(ping1.event_id);
    expect(verifyWebhookSignature(r1!.rawBody, header1, rotated.body.secret).id).toBe(ping1.event_id);

    await advance(api, 24 * 3600 + 1);
    const ping2 = (await api.post(`/webhook_endpoints/${endpoint.id}/test`)).body;
    const [r2] = await gw.receiver.waitFor(forEvent(ping2.event_id));
    const header2 = String(r2!.headers['service-signature']);
    expect(header2.match(/v1=/g)).toHaveLength(1);
    expect(verifyWebhookSignature(r2!.rawBody, header2, rotated.body.secret).id).toBe(ping2.event_id);
    expect(() => verifyWebhookSignature(r2!.rawBody, header2, endpoint.secret)).toThrow(WebhookSignatureError);
  });

  /** The signature header of a fresh test.ping to the endpoint, with its body and `v1=` values. */
  async function pingSignature(endpointId: string) {
    const ping = (await account.api.post(`/webhook_endpoints/${endpointId}/test`)).body;
    const [req] = await gw.receiver.waitFor(forEvent(ping.event_id));
    const header = String(req!.headers['service-signature']);
    const t = /^t=(\d+)/.exec(header)?.[1];
    const signedWith = (secret: string) => createHmac('sha256', secret).update(`${t}.${req!.rawBody}`).digest('hex');
    return { header, body: req!.rawBody, v1: [...header.matchAll(/v1=([0-9a-f]{64})/g)].map((m) => m[1]), signedWith };
  }

  it('a second rotation within 24 h signs with the new secret and the one before it only (two v1= values)', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('rotate-twice'));
    const first = (await api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`)).body.secret as string;
    await advance(api, 3600);
    const second = (await api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`)).body.secret as string;

    const sig = await pingSignature(endpoint.id);
    // The contract's header pattern: at most two v1= values.
    expect(sig.header).toMatch(/^t=[0-9]+(,v1=[0-9a-f]{64}){1,2}$/);
    expect(sig.v1).toEqual([sig.signedWith(second), sig.signedWith(first)]);
    expect(() => verifyWebhookSignature(sig.body, sig.header, endpoint.secret)).toThrow(WebhookSignatureError);

    // The previous secret signs for 24 h from the rotation that made it previous, then only the new one.
    await advance(api, 24 * 3600 - 60);
    expect((await pingSignature(endpoint.id)).v1).toHaveLength(2);
    await advance(api, 61);
    const after = await pingSignature(endpoint.id);
    expect(after.v1).toEqual([after.signedWith(second)]);
  });

  it('two concurrent rotations both keep their secret: the later one current, the earlier one previous', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('rotate-concurrent'));
    const [a, b] = await Promise.all([
      api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`),
      api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const sig = await pingSignature(endpoint.id);
    // Whichever was applied last signs first; each caller's secret verifies, the original does not.
    expect(sig.v1).toHaveLength(2);
    expect(new Set(sig.v1)).toEqual(new Set([sig.signedWith(a.body.secret), sig.signedWith(b.body.secret)]));
    expect(() => verifyWebhookSignature(sig.body, sig.header, endpoint.secret)).toThrow(WebhookSignatureError);
  });
});

describe('a payment life, end to end', () => {
  it('delivers payment.created and payment.succeeded of an express payment, in order', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('life'));
    const pi = await createPayment(api, expressBody('923000000'));
    await advance(api, 6);
    const got = await gw.receiver.waitFor(atPath('life'), 2);
    expect(got.map((r) => JSON.parse(r.rawBody).type)).toEqual(['payment.created', 'payment.succeeded']);
    expect(JSON.parse(got[1]!.rawBody).data).toMatchObject({ id: pi.id, status: 'SUCCEEDED' });
    for (const r of got) expect(verifyWebhookSignature(r.rawBody, String(r.headers['service-signature']), endpoint.secret).data.id).toBe(pi.id);
  });

  it('sends the deliveries once the event is stored: a receiver finds the event at once', async () => {
    const { api } = account;
    await createEndpoint(api, hookUrl('stored-first'));
    // When each event's insert finished, as the outbox tells this gateway's listeners (the event bus is one).
    const storedAt = new Map<string, number>();
    const stopListening = gw.server.gateway.runtime.hooks.onEventInsertedHere((event) => storedAt.set(event.id, performance.now()));
    const arrivedAt = new Map<string, number>();
    const lookups: Array<Promise<boolean>> = [];
    // Only this test's deliveries look the event up: the reply is restored below, or a later delivery
    // (to any path of the shared receiver) would send a lookup nobody awaits while the gateway stops.
    const reply = gw.receiver.reply;
    gw.receiver.reply = (r) => {
      if (!r.path.includes('stored-first')) return reply(r);
      const id = String(r.headers['service-event-id']);
      arrivedAt.set(id, performance.now());
      // What a receiver may do first: look the event up in GET /events.
      lookups.push(api.get('/events?limit=100').then((res) => res.status === 200 && res.body.data.some((e: { id: string }) => e.id === id)));
      return { status: 200 };
    };
    try {
      await createPayment(api, expressBody('923000000'));
      await advance(api, 6);
      const got = await gw.receiver.waitFor(atPath('stored-first'), 2);
      for (const r of got) {
        const id = String(r.headers['service-event-id']);
        expect(storedAt.get(id), `${id} went through the outbox`).toBeTypeOf('number');
        expect(arrivedAt.get(id)!).toBeGreaterThanOrEqual(storedAt.get(id)!);
      }
      expect(await Promise.all(lookups)).toEqual([true, true]);
    } finally {
      stopListening();
      gw.receiver.reply = reply;
    }
  });
});
