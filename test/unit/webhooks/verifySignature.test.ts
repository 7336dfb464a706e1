import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../../src/domain/webhooks/signature';
import { verifyWebhookSignature, WebhookSignatureError } from '../../../src/index';

const secret = 'whsec_test0123456789abcdefghijklmnopqrs';
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment.succeeded', livemode: false, created_at: '2026-01-01T00:00:00.000Z', data: { id: 'pay_1' } });
const now = 1_800_000_000;

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.reason;
    throw err;
  }
  return undefined;
}

describe('verifyWebhookSignature', () => {
  it('accepts what the gateway signs and agrees with an independent HMAC', () => {
    const header = signatureHeader(body, [secret], now);
    const independent = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    expect(header).toBe(`t=${now},v1=${independent}`);
    const event = verifyWebhookSignature(body, header, secret, 600, now);
    expect(event.id).toBe('evt_1');
    expect(verifyWebhookSignature(Buffer.from(body), header, secret, 600, now).type).toBe('payment.succeeded');
  });

  it('rejects a tampered body and a wrong secret', () => {
    const header = signatureHeader(body, [secret], now);
    expect(reason(() => verifyWebhookSignature(body.replace('pay_1', 'pay_2'), header, secret, 600, now))).toBe('signature_mismatch');
    expect(reason(() => verifyWebhookSignature(body + ' ', header, secret, 600, now))).toBe('signature_mismatch');
    expect(reason(() => verifyWebhookSignature(body, header, 'whsec_other', 600, now))).toBe('signature_mismatch');
  });

  it('rejects a timestamp outside the tolerance, in either direction', () => {
    expect(reason(() => verifyWebhookSignature(body, signatureHeader(body, [secret], now - 601), secret, 600, now))).toBe('timestamp_out_of_tolerance');
    expect(reason(() => verifyWebhookSignature(body, signatureHeader(body, [secret], now + 601), secret, 600, now))).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhookSignature(body, signatureHeader(body, [secret], now - 600), secret, 600, now).id).toBe('evt_1');
    expect(reason(() => verifyWebhookSignature(body, signatureHeader(body, [secret], now - 100), secret, 60, now))).toBe('timestamp_out_of_tolerance');
  });

  it('rejects malformed headers', () => {
    const v1 = createHmac('sha256', secret).update(`${now}.${body}`).digest('hex');
    for (const header of [
      '',
      undefined,
      'garbage',
      `v1=${v1}`,
      `t=${now}`,
      `t=abc,v1=${v1}`,
      `t=${now},v1=${v1.toUpperCase()}`,
      `t=${now},v1=${v1.slice(0, 63)}`,
      `t=${now},t=${now},v1=${v1}`,
      `t=${now},=x,v1=${v1}`,
    ]) {
      expect(reason(() => verifyWebhookSignature(body, header, secret, 600, now)), String(header)).toBe('malformed_header');
    }
  });

  it('accepts any of several v1 values and any of several secrets (rotation)', () => {
    const rotated = signatureHeader(body, ['whsec_new', 'whsec_old'], now);
    expect(rotated.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(verifyWebhookSignature(body, rotated, 'whsec_old', 600, now).id).toBe('evt_1');
    expect(verifyWebhookSignature(body, rotated, 'whsec_new', 600, now).id).toBe('evt_1');
    const single = signatureHeader(body, ['whsec_new'], now);
    expect(verifyWebhookSignature(body, single, ['whsec_old', 'whsec_new'], 600, now).id).toBe('evt_1');
    expect(reason(() => verifyWebhookSignature(body, single, ['whsec_old'], 600, now))).toBe('signature_mismatch');
    // Unknown schemes are ignored rather than treated as malformed.
    expect(verifyWebhookSignature(body, `${single},v0=abc`, 'whsec_new', 600, now).id).toBe('evt_1');
  });

  it('rejects a correctly signed body that is not an event, and a parsed (non-raw) body', () => {
    const notEvent = '[1,2,3]';
    expect(reason(() => verifyWebhookSignature(notEvent, signatureHeader(notEvent, [secret], now), secret, 600, now))).toBe('invalid_payload');
    const parsed = JSON.parse(body) as unknown as string;
    expect(reason(() => verifyWebhookSignature(parsed, signatureHeader(body, [secret], now), secret, 600, now))).toBe('invalid_payload');
    expect(reason(() => verifyWebhookSignature(undefined as unknown as string, signatureHeader(body, [secret], now), secret, 600, now))).toBe('invalid_payload');
  });
});
