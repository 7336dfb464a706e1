import { beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { standardWebhookHeaders, verifyStandardWebhook, verifyWebhookSignature, WebhookSignatureError } from '@pgw/client';
import { createAccount, type TestAccount } from '../support/accounts';
import type { ReceivedRequest } from '../support/receiver';
import { useGatewayAndReceiver } from './support/gateway';
import { ping, setChaos } from './support/chaos';
import { createEndpoint } from './support/webhooks';
import { validators } from '../../generated/validators/index';

/**
 * Every delivery carries the Standard Webhooks headers beside `Service-Signature` (contract decisions,
 * "Versions and compatibility"), checked here with the specification's official library
 * (`standardwebhooks`), not with code of ours: a merchant's backend in any language verifies the same way
 * with the secret as the gateway showed it.
 */
const gw = useGatewayAndReceiver();
let account: TestAccount;
beforeEach(async () => {
  account = await createAccount(gw.server.baseUrl);
  gw.receiver.reply = () => ({ status: 200 });
});

const at = (name: string) => (r: ReceivedRequest) => r.path === `/standard/${name}`;
const headersOf = (r: ReceivedRequest) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/**
 * What the official library says of a request: the payload it verified, or why it refused. @pgw/client's
 * verifyStandardWebhook must say the same (verified, or refused for the same kind of reason).
 */
function officialVerdict(r: ReceivedRequest, secret: string): string {
  let official: string;
  try {
    const payload = new Webhook(secret).verify(r.rawBody, headersOf(r)) as { id: string };
    official = `verified ${payload.id}`;
  } catch (err) {
    official = `refused: ${(err as Error).message}`;
  }
  let ours: string;
  try {
    ours = `verified ${verifyStandardWebhook(r.rawBody, r.headers, secret).id}`;
  } catch (err) {
    ours = err instanceof WebhookSignatureError ? `refused: ${err.reason}` : String(err);
  }
  const same: Record<string, string> = { 'No matching signature found': 'signature_mismatch', 'Message timestamp too old': 'timestamp_out_of_tolerance' };
  expect(ours, `@pgw/client's verifyStandardWebhook against the official library's "${official}"`).toBe(
    official.startsWith('verified') ? official : `refused: ${same[official.slice('refused: '.length)] ?? 'signature_mismatch'}`,
  );
  return official;
}

describe('Standard Webhooks headers', () => {
  it('a delivery verifies with the official library and the secret as shown; both headers agree on id and time', async () => {
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/standard/plain`);
    // New secrets are whsec_ and the base64 of 32 bytes, the form the specification's libraries expect.
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z+/]{43}=$/);
    expect(Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const eventId = await ping(account.api, endpoint.id);
    const [r] = await gw.receiver.waitFor(at('plain'));
    const t = /^t=(\d+),/.exec(String(r!.headers['service-signature']))![1];
    expect(headersOf(r!)).toMatchObject({ 'webhook-id': eventId, 'webhook-timestamp': t });
    expect(r!.headers['service-event-id']).toBe(eventId);
    expect(r!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Every header as openapi.yaml's paymentEvent webhook declares it.
    expect(validators.paymentEvent_headers(r!.headers), JSON.stringify(validators.paymentEvent_headers.errors)).toBe(true);

    expect(officialVerdict(r!, endpoint.secret)).toBe(`verified ${eventId}`);
    expect(verifyWebhookSignature(r!.rawBody, String(r!.headers['service-signature']), endpoint.secret).id).toBe(eventId);

    // What a careful receiver refuses, the official library refuses: another body, another id, another secret.
    const tampered = { ...r!, rawBody: r!.rawBody.replace('"test.ping"', '"payment.succeeded"') };
    expect(tampered.rawBody).not.toBe(r!.rawBody);
    expect(officialVerdict(tampered, endpoint.secret)).toMatch(/^refused/);
    expect(officialVerdict({ ...r!, headers: { ...r!.headers, 'webhook-id': 'evt_000000000000000000000000' } }, endpoint.secret)).toMatch(/^refused/);
    const other = await createEndpoint(account.api, `${gw.receiver.url}/standard/other`);
    expect(officialVerdict(r!, other.secret)).toMatch(/^refused/);
  });

  it('during the 24 h after a rotation, carries both signatures: either secret verifies', async () => {
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/standard/rotated`);
    const rotated = await account.api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    const eventId = await ping(account.api, endpoint.id);
    const [r] = await gw.receiver.waitFor(at('rotated'));
    expect(r!.headers['webhook-signature']).toMatch(/^v1,\S{44} v1,\S{44}$/);
    expect(officialVerdict(r!, rotated.body.secret)).toBe(`verified ${eventId}`);
    expect(officialVerdict(r!, endpoint.secret)).toBe(`verified ${eventId}`);
  });

  it('chaos copies are forged in both signatures: the official library refuses a bad signature and a stale timestamp', async () => {
    const endpoint = await createEndpoint(account.api, `${gw.receiver.url}/standard/chaos`);
    await setChaos(account.api, endpoint.id, { bad_signature: 1, stale_timestamp: 1, seed: 7 });
    const eventId = await ping(account.api, endpoint.id);
    // The genuine delivery and its two forged copies.
    const got = await gw.receiver.waitFor((r) => at('chaos')(r) && r.headers['webhook-id'] === eventId, 3);
    const verdicts = got.map((r) => officialVerdict(r, endpoint.secret));
    expect(verdicts.filter((v) => v === `verified ${eventId}`)).toHaveLength(1);
    expect(verdicts.filter((v) => /^refused: No matching signature found$/.test(v))).toHaveLength(1);
    expect(verdicts.filter((v) => /^refused: Message timestamp too old$/.test(v))).toHaveLength(1);
    // The stale copy's two headers carry the same old time.
    const stale = got[verdicts.findIndex((v) => v.includes('too old'))]!;
    expect(String(stale.headers['service-signature'])).toContain(`t=${stale.headers['webhook-timestamp']},`);
  });

  it('a secret made before (whsec_ and 32 base62 characters) signs headers the official library verifies', () => {
    const legacy = 'whsec_RrIRzH3GTkaBdLitGQPFc0Cd0E7HSmUu';
    const body = '{"id":"evt_KbDRoe7DDnnozY3aOwehgCVD","object":"event","type":"test.ping"}';
    const now = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders([legacy], 'evt_KbDRoe7DDnnozY3aOwehgCVD', now, body);
    expect(new Webhook(legacy).verify(body, headers)).toMatchObject({ type: 'test.ping' });
  });
});
