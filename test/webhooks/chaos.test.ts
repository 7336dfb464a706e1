import { beforeEach, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { chaosPlan, genuineKind, type ChaosSettings } from '../../src/domain/webhooks/chaos';
import { useGatewayAndReceiver } from './support/gateway';
import { createEndpoint, deliveries, waitFor } from './support/webhooks';
import { chaosReport, forEvent, ping, setChaos, verifies } from './support/chaos';
import { gql, gqlData } from '../graphql/support';

const gw = useGatewayAndReceiver();
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
  gw.receiver.reply = () => ({ status: 200 });
});

const hookUrl = (name: string) => `${gw.receiver.url}/chaos/${name}`;
const atPath = (name: string) => (r: { path: string }) => r.path === `/chaos/${name}`;
const settings = (s: Partial<ChaosSettings>): ChaosSettings => ({ duplicate: 0, reorder: 0, bad_signature: 0, stale_timestamp: 0, delay_ms: null, seed: 1, ...s });

/** The deliveries of one event, once `count` of them have been attempted. */
async function attemptedFor(endpointId: string, eventId: string, count: number): Promise<any[]> {
  return waitFor(
    async () => (await deliveries(account.api, endpointId)).filter((d) => d.event_id === eventId && d.attempts > 0),
    (found) => found.length >= count,
  );
}

describe('chaos settings', () => {
  it('are set, shown on the endpoint, read and switched off', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('crud'));
    expect(endpoint.chaos).toBeNull();
    const off = await api.get(`/webhook_endpoints/${endpoint.id}/chaos`);
    expect(off.body).toMatchObject({ object: 'webhook_chaos', endpoint: endpoint.id, enabled: false, duplicate: 0, delay_ms: null, seed: null });

    const on = await setChaos(api, endpoint.id, { duplicate: 0.2, reorder: 0.1, bad_signature: 0.1, delay_ms: { min: 0, max: 50 }, seed: 42 });
    expect(on).toEqual({
      object: 'webhook_chaos',
      endpoint: endpoint.id,
      enabled: true,
      duplicate: 0.2,
      reorder: 0.1,
      bad_signature: 0.1,
      stale_timestamp: 0,
      delay_ms: { min: 0, max: 50 },
      seed: 42,
      report: { forged_sent: 0, forged_rejected: 0, forged_accepted: 0, duplicates_sent: 0, reordered: 0, delayed: 0 },
    });
    expect((await api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body).toEqual(on);
    const listed = (await api.get('/webhook_endpoints')).body.data.find((e: any) => e.id === endpoint.id);
    expect(listed.chaos).toEqual({ duplicate: 0.2, reorder: 0.1, bad_signature: 0.1, stale_timestamp: 0, delay_ms: { min: 0, max: 50 }, seed: 42 });

    // Without a seed the gateway picks one and shows it, so that the run can be repeated.
    const picked = await setChaos(api, endpoint.id, { duplicate: 1 });
    expect(Number.isInteger(picked.seed)).toBe(true);

    const cleared = await api.delete(`/webhook_endpoints/${endpoint.id}/chaos`);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ enabled: false, duplicate: 0, seed: null });
    expect((await api.get('/webhook_endpoints')).body.data.find((e: any) => e.id === endpoint.id).chaos).toBeNull();

    // Another account's endpoint is not found.
    const other = await createAccount(gw.server.baseUrl);
    expect((await other.api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).status).toBe(404);
    expect((await other.api.put(`/webhook_endpoints/${endpoint.id}/chaos`, { duplicate: 1 })).status).toBe(404);
    expect((await other.api.delete(`/webhook_endpoints/${endpoint.id}/chaos`)).status).toBe(404);
  });

  it('refuses invalid settings with 400 invalid_request and changes nothing', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('invalid'));
    const before = await setChaos(api, endpoint.id, { duplicate: 0.5, seed: 3 });
    const bad = [
      { duplicate: 1.5 },
      { reorder: -0.1 },
      { bad_signature: 'often' },
      { delay_ms: { min: 10, max: 5 } },
      { delay_ms: { min: 0, max: 60_001 } },
      { delay_ms: { min: 0 } },
      { seed: 1.5 },
      { seed: 2 ** 40 },
      { sometimes: 0.5 },
    ];
    for (const body of bad) {
      const res = await api.put(`/webhook_endpoints/${endpoint.id}/chaos`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.request_id).toMatch(/^req_/);
    }
    expect((await api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body).toEqual(before);
  });
});

describe('choices', () => {
  it('are the same for the same seed, event and endpoint, and differ with the seed', () => {
    const s = settings({ duplicate: 0.5, reorder: 0.5, bad_signature: 0.5, stale_timestamp: 0.5, delay_ms: { min: 0, max: 1000 }, seed: 7 });
    const ids = Array.from({ length: 40 }, (_, i) => `evt_${String(i).padStart(24, '0')}`);
    const plans = ids.map((id) => chaosPlan(s, id, 'whe_A'));
    expect(ids.map((id) => chaosPlan(s, id, 'whe_A'))).toEqual(plans);
    expect(ids.map((id) => chaosPlan({ ...s, seed: 8 }, id, 'whe_A'))).not.toEqual(plans);
    expect(ids.map((id) => chaosPlan(s, id, 'whe_B'))).not.toEqual(plans);
    // Probability 0 never falls, 1 always does.
    expect(ids.every((id) => chaosPlan(settings({ duplicate: 1 }), id, 'whe_A')?.duplicate_after_ms !== null)).toBe(true);
    expect(ids.every((id) => chaosPlan(settings({}), id, 'whe_A') === null)).toBe(true);
    // Roughly half fall at 0.5: the draws are spread, not stuck.
    const dupes = plans.filter((p) => p?.duplicate_after_ms !== null && p !== null).length;
    expect(dupes).toBeGreaterThan(5);
    expect(dupes).toBeLessThan(35);
  });

  it('made by the gateway are the ones the seed predicts, and the delivery log shows their kinds', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('seeded'));
    const chaos = await setChaos(api, endpoint.id, { duplicate: 0.5, bad_signature: 0.5, seed: 1234 });
    const events: string[] = [];
    for (let i = 0; i < 6; i++) events.push(await ping(api, endpoint.id));
    for (const id of events) {
      const plan = chaosPlan(settings({ duplicate: 0.5, bad_signature: 0.5, seed: chaos.seed }), id, endpoint.id);
      const expected = [null, ...(plan?.forged ?? []), ...(plan?.duplicate_after_ms != null ? ['duplicate'] : [])];
      const got = await attemptedFor(endpoint.id, id, expected.length);
      expect(got.map((d) => d.chaos).sort(), id).toEqual([...expected].sort());
    }
  });
});

describe('forged copies', () => {
  it('reach a receiver before the genuine delivery; the report tells a verifying receiver from one that is not', async () => {
    const { api } = account;
    const careful = await createEndpoint(api, hookUrl('careful'));
    const naive = await createEndpoint(api, hookUrl('naive'));
    // The careful receiver verifies the signature and its timestamp (@pgw/client); the naive one takes all.
    gw.receiver.reply = (r) => ({ status: atPath('careful')(r) && !verifies(r, careful.secret) ? 400 : 200 });
    for (const e of [careful, naive]) await setChaos(api, e.id, { bad_signature: 1, stale_timestamp: 1, seed: 99 });

    for (const [endpoint, name] of [[careful, 'careful'], [naive, 'naive']] as const) {
      const eventId = await ping(api, endpoint.id);
      const got = await gw.receiver.waitFor((r) => atPath(name)(r) && forEvent(eventId)(r), 3);
      // Two forged copies first, then the genuine delivery, which alone verifies.
      expect(got.map((r) => verifies(r, endpoint.secret))).toEqual([false, false, true]);
      const stamps = got.map((r) => Number(/t=(\d+)/.exec(String(r.headers['service-signature']))![1]));
      expect(stamps[0]! - stamps[1]!).toBeGreaterThanOrEqual(3_600 - 5);

      const log = await attemptedFor(endpoint.id, eventId, 3);
      const byKind = Object.fromEntries(log.map((d) => [String(d.chaos), d]));
      expect(Object.keys(byKind).sort()).toEqual(['bad_signature', 'null', 'stale_timestamp']);
      // Forged copies never count as the delivery's success: the genuine one was sent and delivered.
      expect(byKind.null.state).toBe('DELIVERED');
      expect(byKind.bad_signature.request_body).toBe(byKind.null.request_body);
    }

    const sentTwo = (r: any) => r.forged_sent === 2;
    expect(await waitFor(() => chaosReport(api, careful.id), sentTwo)).toMatchObject({ forged_rejected: 2, forged_accepted: 0 });
    expect(await waitFor(() => chaosReport(api, naive.id), sentTwo)).toMatchObject({ forged_rejected: 0, forged_accepted: 2 });
    const naiveLog = await deliveries(api, naive.id);
    expect(naiveLog.filter((d) => d.chaos === 'bad_signature').map((d) => d.state)).toEqual(['DELIVERED']);
  });

  it('do not make a failing genuine delivery a success: it follows the normal retry rules', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('failing'));
    await setChaos(api, endpoint.id, { bad_signature: 1, seed: 5 });
    // Takes forged copies, fails genuine ones: the worst receiver.
    gw.receiver.reply = (r) => ({ status: atPath('failing')(r) && verifies(r, endpoint.secret) ? 500 : 200 });
    const eventId = await ping(api, endpoint.id);
    const log = await attemptedFor(endpoint.id, eventId, 2);
    const genuine = log.find((d) => d.chaos === null);
    expect(genuine.state).toBe('RETRYING');
    expect(genuine.next_attempt_at).not.toBeNull();
    expect(log.find((d) => d.chaos === 'bad_signature').state).toBe('DELIVERED');
  });
});

describe('a chaos copy', () => {
  it('is not sent again by a manual retry: 400 invalid_request, the copy unchanged; the genuine one is', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('copy-retry'));
    await setChaos(api, endpoint.id, { bad_signature: 1, seed: 7 });
    const eventId = await ping(api, endpoint.id);
    const log = await attemptedFor(endpoint.id, eventId, 2);
    const copy = log.find((d) => d.chaos === 'bad_signature');
    const genuine = log.find((d) => d.chaos === null);
    const retried = await api.post(`/webhook_endpoints/${endpoint.id}/deliveries/${copy.id}/retry`);
    expect(retried.status, retried.text).toBe(400);
    expect(retried.body.error.code).toBe('invalid_request');
    expect(retried.body.error.message).toContain(eventId);
    const after = (await deliveries(api, endpoint.id)).find((d) => d.id === copy.id);
    expect(after.attempts).toBe(copy.attempts);
    expect(after.state).toBe(copy.state);
    // GraphQL runs the same operation: the same refusal.
    const gqlRetry = await gql(gw.server.baseUrl, account.sk, 'mutation($e: ID!, $d: ID!) { retryWebhookDelivery(endpointId: $e, deliveryId: $d) { id } }', { e: endpoint.id, d: copy.id });
    expect(gqlRetry.body.errors?.[0]?.extensions?.code, JSON.stringify(gqlRetry.body)).toBe('invalid_request');
    const genuineRetry = await api.post(`/webhook_endpoints/${endpoint.id}/deliveries/${genuine.id}/retry`);
    expect(genuineRetry.status, genuineRetry.text).toBe(200);
    expect(genuineRetry.body.attempts).toBe(genuine.attempts + 1);
  });
});

describe('duplicates, reordering and delays', () => {
  it('sends a duplicate with the same id and a valid signature, logged as a duplicate', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('dup'));
    await setChaos(api, endpoint.id, { duplicate: 1, seed: 11 });
    const eventId = await ping(api, endpoint.id);
    const got = await gw.receiver.waitFor((r) => atPath('dup')(r) && forEvent(eventId)(r), 2);
    expect(got.map((r) => JSON.parse(r.rawBody).id)).toEqual([eventId, eventId]);
    expect(got.every((r) => verifies(r, endpoint.secret))).toBe(true);
    expect(got[0]!.rawBody).toBe(got[1]!.rawBody);
    const log = await attemptedFor(endpoint.id, eventId, 2);
    expect(log.map((d) => d.chaos).sort()).toEqual(['duplicate', null]);
    await waitFor(() => chaosReport(api, endpoint.id), (r) => r.duplicates_sent === 1);
  });

  it('holds a reordered delivery until the endpoint’s next delivery has been sent', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('reorder'));
    const { seed } = await setChaos(api, endpoint.id, { reorder: 0.5, seed: 2026 });
    const reordered = (id: string) => chaosPlan(settings({ reorder: 0.5, seed }), id, endpoint.id)?.reorder === true;
    // Pings until one the seed holds is followed by one it does not: that one must arrive first.
    let held: string | null = null;
    let next: string | null = null;
    for (let i = 0; i < 30 && !next; i++) {
      const id = await ping(api, endpoint.id);
      if (reordered(id)) held ??= id;
      else if (held) next = id;
      else await gw.receiver.waitFor((r) => forEvent(id)(r));
    }
    expect(held && next, 'the seed held none of 30 pings, or all').toBeTruthy();
    await gw.receiver.waitFor((r) => forEvent(held!)(r));
    const order = gw.receiver.received.filter(atPath('reorder')).map((r) => r.headers['service-event-id']);
    expect(order.indexOf(next!)).toBeLessThan(order.indexOf(held!));
    const log = await deliveries(api, endpoint.id);
    expect(log.find((d) => d.event_id === held).chaos).toBe('reordered');
    expect(log.find((d) => d.event_id === next).chaos).toBeNull();
    expect((await chaosReport(api, endpoint.id)).reordered).toBeGreaterThanOrEqual(1);
  });

  it('delays the first attempt by delay_ms', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('delay'));
    await setChaos(api, endpoint.id, { delay_ms: { min: 400, max: 400 }, seed: 1 });
    const sentAt = Date.now();
    const eventId = await ping(api, endpoint.id);
    const [r] = await gw.receiver.waitFor((x) => forEvent(eventId)(x));
    expect(r!.at - sentAt).toBeGreaterThanOrEqual(400);
    const [d] = await attemptedFor(endpoint.id, eventId, 1);
    expect(d.chaos).toBe('delayed');
    expect(genuineKind(chaosPlan(settings({ delay_ms: { min: 400, max: 400 } }), eventId, endpoint.id))).toBe('delayed');
    expect(await chaosReport(api, endpoint.id)).toMatchObject({ delayed: 1, reordered: 0, duplicates_sent: 0 });
  });

  it('stops once switched off: new deliveries are sent as usual', async () => {
    const { api } = account;
    const endpoint = await createEndpoint(api, hookUrl('off'));
    await setChaos(api, endpoint.id, { duplicate: 1, bad_signature: 1, seed: 4 });
    expect((await api.delete(`/webhook_endpoints/${endpoint.id}/chaos`)).status).toBe(200);
    const eventId = await ping(api, endpoint.id);
    const log = await attemptedFor(endpoint.id, eventId, 1);
    expect(log.map((d) => d.chaos)).toEqual([null]);
  });
});

describe('over GraphQL', () => {
  it('sets, shows and clears chaos with the same service, and deliveries show their kind', async () => {
    const { api, sk } = account;
    const endpoint = await createEndpoint(api, hookUrl('graphql'));
    const set = await gqlData(gw.server.baseUrl, sk, `mutation($id: ID!) { setWebhookChaos(id: $id, input: { duplicate: 1, delayMs: { min: 5, max: 10 }, seed: 77 }) { endpointId enabled duplicate reorder delayMs { min max } seed report { duplicatesSent } } }`, { id: endpoint.id });
    expect(set.setWebhookChaos).toEqual({ endpointId: endpoint.id, enabled: true, duplicate: 1, reorder: 0, delayMs: { min: 5, max: 10 }, seed: 77, report: { duplicatesSent: 0 } });
    const rest = (await api.get(`/webhook_endpoints/${endpoint.id}/chaos`)).body;
    expect(rest).toMatchObject({ duplicate: 1, seed: 77, delay_ms: { min: 5, max: 10 } });

    const invalid = await gql(gw.server.baseUrl, sk, `mutation($id: ID!) { setWebhookChaos(id: $id, input: { reorder: 2 }) { enabled } }`, { id: endpoint.id });
    expect(invalid.body.errors?.[0]?.extensions?.code).toBe('invalid_request');

    const eventId = await ping(api, endpoint.id);
    await attemptedFor(endpoint.id, eventId, 2);
    const read = `query($id: ID!) { webhookEndpoint(id: $id) { chaos { seed report { duplicatesSent forgedAccepted } } deliveries { eventId chaos } } }`;
    const seen = await waitFor(() => gqlData(gw.server.baseUrl, sk, read, { id: endpoint.id }), (d: any) => d.webhookEndpoint.chaos.report.duplicatesSent === 1);
    expect(seen.webhookEndpoint.deliveries.map((d: any) => d.chaos).sort()).toEqual(['DELAYED', 'DUPLICATE']);

    const cleared = await gqlData(gw.server.baseUrl, sk, `mutation($id: ID!) { clearWebhookChaos(id: $id) { enabled seed report { duplicatesSent } } }`, { id: endpoint.id });
    expect(cleared.clearWebhookChaos).toEqual({ enabled: false, seed: null, report: { duplicatesSent: 1 } });
    expect((await gqlData(gw.server.baseUrl, sk, read, { id: endpoint.id })).webhookEndpoint.chaos).toBeNull();
  });
});
