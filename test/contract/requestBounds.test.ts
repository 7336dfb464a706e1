import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { getValidator } from '../../src/operations/contract';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { ROOT } from '../support/processes';
import { sharedGateway } from '../support/server';

/**
 * Every bound a request body's schema states (maxLength, maximum, maxItems; the OWASP API Security
 * ruleset that `npm run lint` runs asks for one on every string, integer and array) is enforced by the
 * validators codegen.ts generates: the operation's own example, with one field set just past its bound,
 * is refused at that field. Then the bounds that arrived with the ruleset, just past them, over HTTP.
 */
type Schema = Record<string, any>;
const doc = JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')) as Schema;

function deref(schema: Schema): Schema {
  let s = schema;
  while (typeof s?.$ref === 'string') s = s.$ref.split('/').slice(1).reduce((node: Schema, key: string) => node[key], doc);
  return s;
}

interface Bound {
  operationId: string;
  /** Property names from the body's root; '[]' for an array's items. */
  at: string[];
  keyword: 'maxLength' | 'maximum' | 'maxItems';
  limit: number;
  example: unknown;
}

/** The bounds of a schema's properties (and of their arrays' items), depth first. */
function boundsOf(schema: Schema, at: string[], out: Array<Omit<Bound, 'operationId' | 'example'>>, seen: Set<Schema>): void {
  const s = deref(schema);
  if (seen.has(s)) return;
  seen.add(s);
  for (const keyword of ['maxLength', 'maximum', 'maxItems'] as const) {
    if (typeof s[keyword] === 'number' && at.length > 0) out.push({ at, keyword, limit: s[keyword] });
  }
  for (const [name, property] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) boundsOf(property, [...at, name], out, seen);
  if (s.items) boundsOf(s.items, [...at, '[]'], out, seen);
  seen.delete(s);
}

function requestBounds(): Bound[] {
  const bounds: Bound[] = [];
  for (const item of Object.values(doc.paths as Record<string, Schema>)) {
    for (const op of Object.values(item) as Schema[]) {
      const media = op?.requestBody && deref(op.requestBody).content?.['application/json'];
      if (!media) continue;
      const found: Array<Omit<Bound, 'operationId' | 'example'>> = [];
      boundsOf(media.schema, [], found, new Set());
      const examples: unknown[] = media.example !== undefined ? [media.example] : Object.values((media.examples ?? {}) as Record<string, Schema>).map((e) => e.value);
      // The example that holds the field, if one does: members that exclude one another (a QR code's
      // payment_link and amount) would otherwise refuse the body at its root.
      const holding = (field: string) => examples.find((e) => e && typeof e === 'object' && field in e) ?? examples[0] ?? {};
      for (const b of found) bounds.push({ ...b, operationId: op.operationId, example: holding(b.at[0]!) });
    }
  }
  return bounds;
}

/** The value just past a bound: one character, one unit or one item more. */
function pastBound(b: Bound): unknown {
  if (b.keyword === 'maxLength') return '9'.repeat(b.limit + 1);
  if (b.keyword === 'maximum') return b.limit + 1;
  return Array.from({ length: b.limit + 1 }, (_, i) => `item${i}`);
}

/** `example` with the value at `at` replaced (an array's items: one item holding the value). */
function withValue(example: unknown, at: string[], value: unknown): unknown {
  if (at.length === 0) return value;
  const [head, ...rest] = at;
  if (head === '[]') return [withValue(undefined, rest, value)];
  const base = example && typeof example === 'object' && !Array.isArray(example) ? (example as Record<string, unknown>) : {};
  return { ...base, [head!]: withValue(base[head!], rest, value) };
}

describe('request bounds in the generated validators', () => {
  const bounds = requestBounds();

  it('finds the bounds of every request body', () => {
    // Fewer would mean the walk lost its way (a $ref not followed), not that the contract lost bounds.
    expect(bounds.length).toBeGreaterThan(30);
    expect(new Set(bounds.map((b) => b.operationId)).size).toBeGreaterThan(12);
  });

  it.each(bounds.map((b) => [`${b.operationId} ${b.at.join('.')} ${b.keyword} ${b.limit}`, b] as const))('%s: refused just past it', (_name, b) => {
    const validate = getValidator('requests', `${b.operationId}_body`);
    const body = withValue(b.example, b.at, pastBound(b));
    expect(validate(body), JSON.stringify(body).slice(0, 200)).toBe(false);
    const where = `/${b.at.map((p) => (p === '[]' ? '0' : p)).join('/')}`;
    // The refusal is at the field (or inside it: the first item of a too-long array may fail first).
    expect(validate.errors![0]!.instancePath.startsWith(where.replace(/\/0$/, '')), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('the bounds added with the OWASP ruleset, over HTTP', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await createAccount((await sharedGateway()).baseUrl, 'request bounds');
  });

  it('recover: a `since` of 65 characters is 400 invalid_request naming it', async () => {
    const endpoint = await account.api.post('/webhook_endpoints', { url: 'https://example.com/hooks', events: ['*'] });
    expect(endpoint.status, endpoint.text).toBe(201);
    const since = `2026-12-06T10:00:00.${'0'.repeat(43)}Z`;
    expect(since).toHaveLength(64);
    const tooLong = await account.api.post(`/webhook_endpoints/${endpoint.body.id}/recover`, { since: `${since}0` });
    expect(tooLong.status, tooLong.text).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining("'since'") });
  });

  it('amounts: 2^53 − 1 still reaches the methods (amount_out_of_range); one more is invalid_request', async () => {
    const intent = await account.api.post(
      '/payment_intents',
      { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: idempotencyKey() },
    );
    expect(intent.status, intent.text).toBe(201);
    // Refundable: the sandbox's 923000000 succeeds at +5 s of the account's clock.
    expect((await account.api.post('/sandbox/clock/advance', { seconds: 10 })).status).toBe(200);
    const bodies: Record<string, (amount: number) => unknown> = {
      '/payment_links': (amount) => ({ amount }),
      '/qr_codes': (amount) => ({ amount }),
      '/checkout/sessions': (amount) => ({ amount }),
      '/refunds': (amount) => ({ payment_intent: intent.body.id, amount }),
    };
    for (const [route, body] of Object.entries(bodies)) {
      const atBound = await account.api.post(route, body(Number.MAX_SAFE_INTEGER), { idempotencyKey: idempotencyKey() });
      expect(atBound.status, `${route}: ${atBound.text}`).toBe(400);
      expect(atBound.body.error.code, `${route}: ${atBound.text}`).not.toBe('invalid_request');
      // 2^53 itself: the JSON text is exact, whatever a JavaScript number would round it to.
      const past = await account.api.request('POST', route, {
        rawBody: JSON.stringify(body(1)).replace('"amount":1', '"amount":9007199254740992'),
        headers: { 'content-type': 'application/json' },
        idempotencyKey: idempotencyKey(),
      });
      expect(past.status, `${route}: ${past.text}`).toBe(400);
      expect(past.body.error, route).toMatchObject({ code: 'invalid_request', message: expect.stringContaining("'amount'") });
    }
  });

  it('an error message quoting what was sent is cut at 1,024 characters', async () => {
    const res = await account.api.post('/payment_links', { amount: 7500, ['x'.repeat(5000)]: true });
    expect(res.status, res.text.slice(0, 200)).toBe(400);
    expect(res.body.error.message).toHaveLength(1024);
    expect(res.body.error.message.endsWith('…')).toBe(true);
  });
});
