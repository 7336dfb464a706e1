import { describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES, loggedBodies, loggedBody } from '../../src/domain/logs/logBodies';
import { redactPath } from '../../src/domain/logs/redact';
import { mayNameASecret, SECRET_NAME_LISTS } from '../../src/domain/logs/secretNames';
import { mayHaveShape } from '../../src/domain/logs/secretShapes';

/** The redaction GET /logs applies, on texts the HTTP tests cannot easily produce. */
describe('loggedBody', () => {
  it('redacts secret-named keys at any depth and secret-shaped values anywhere', () => {
    const out = loggedBody(
      JSON.stringify({ a: { client_secret: 'abc', api_key_id: 'key_1', Authorization: 'x' }, note: 'use sk_live_ABCdef123 please', n: { password: 42 } }),
    );
    expect(JSON.parse(out!)).toEqual({
      a: { client_secret: '[REDACTED]', api_key_id: 'key_1', Authorization: '[REDACTED]' },
      note: 'use [REDACTED] please',
      n: { password: '[REDACTED]' },
    });
  });

  it('sees through \\u escapes in keys and values', () => {
    const out = loggedBody('{"s\\u0065cret":"plain","v":"\\u0077hsec_ABCDEF"}');
    expect(out).toBe('{"s\\u0065cret":"[REDACTED]","v":"[REDACTED]"}');
  });

  it('redacts a secret cut in half by the scan, and card-like numbers', () => {
    const long = `{"pad":"${'p'.repeat(5110)}","secret":"whsec_abcdefghij"}`;
    expect(loggedBody(long)).not.toContain('whsec_');
    expect(loggedBody('{"pan":"4111 1111 1111 1111","mobile":"923000000"}')).toBe('{"pan":"[REDACTED]","mobile":"923000000"}');
  });

  it('cuts at 4 KiB of UTF-8 without splitting a character, and keeps short bodies whole', () => {
    const out = loggedBody(`"${'é'.repeat(5000)}"`)!;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    expect(out).toMatch(/^"é+…$/);
    expect(loggedBody('{"ok":true}')).toBe('{"ok":true}');
    expect(loggedBody('')).toBeNull();
    expect(loggedBody(null)).toBeNull();
  });
});

/** Issue 54, item 5: redaction by structure (src/domain/logs/redact.ts), case by case. */
describe('redaction by structure', () => {
  it('redacts everything under a secret-named key, names compared without case, `_`, `-` or spaces', () => {
    const out = loggedBody(JSON.stringify({ 'Pass Word ': 'a', 'api-key-': 'b', CLIENT_SECRET_: { v: 'c', w: ['d'] }, tokens: ['e', 'f', 'g'], cvv: 123, keep: 'k', n: null }));
    expect(JSON.parse(out!)).toEqual({ 'Pass Word ': '[REDACTED]', 'api-key-': '[REDACTED]', CLIENT_SECRET_: '[REDACTED]', tokens: '[REDACTED]', cvv: '[REDACTED]', keep: 'k', n: null });
  });

  it('redacts prefixes glued to a word or url-encoded, and card numbers in strings and numbers (on the digits as sent)', () => {
    const out = loggedBody('{"a":"x9whsec_ab+/cd==","b":"Bearer%20sk_test_abc","c":"sk%5Flive%5Fxyz","d":"4242-4242-4242-4242","e":4000000000000000006,"f":"order 923000000","g":1234567890123}');
    expect(JSON.parse(out!)).toEqual({ a: 'x9[REDACTED]', b: '[REDACTED]', c: '[REDACTED]', d: '[REDACTED]', e: '[REDACTED]', f: 'order 923000000', g: 1234567890123 });
  });

  it('reads broken JSON and other text as far as it goes', () => {
    expect(loggedBody('{"token": sk_test_abc, "keep": 1}')).toBe('{"token": "[REDACTED]", "keep": 1}');
    expect(loggedBody('{"keep": "k", "password": correct horse')).toBe('{"keep": "k", "password": "[REDACTED]"');
    expect(loggedBody('password = hunter2&keep=k')).toBe('password = [REDACTED]&keep=k');
    expect(loggedBody("{'api_key': 'abc', 'keep': 'k'}")).toBe("{'api_key': '[REDACTED]', 'keep': 'k'}");
  });

  it('redacts a GraphQL document: inline arguments by name, block strings, shapes', () => {
    const query = '{ a: account(password: "p1", other: """p2""", secret: """p3""") { id } b: paymentIntent(id: "xsk_test_q") { id } }';
    expect(JSON.parse(loggedBody(JSON.stringify({ query }))!).query).toBe('{ a: account(password: "[REDACTED]", other: """p2""", secret: "[REDACTED]") { id } b: paymentIntent(id: "x[REDACTED]") { id } }');
  });

  it('redacts paths and query strings', () => {
    expect(redactPath('/v1/payment_intents/sk_test_abc/refunds')).toBe('/v1/payment_intents/[REDACTED]/refunds');
    expect(redactPath('/v1/x/4111111111111111')).toBe('/v1/x/[REDACTED]');
    expect(redactPath('/v1/x/Bearer%20sk%5Ftest%5Fabc')).toBe('/v1/x/[REDACTED]');
    expect(redactPath('/v1/x?token=abc&limit=1')).toBe('/v1/x?token=[REDACTED]&limit=1');
    expect(redactPath('/v1/payment_intents/pi_123')).toBe('/v1/payment_intents/pi_123');
  });

  it('takes runs of 13-19 digits for card numbers, not longer ones (ids, nanosecond times)', () => {
    // 24 zeros hold Luhn-valid windows of every length; the run itself is no card number.
    expect(redactPath('/v1/payment_intents/pay_000000000000000000000000')).toBe('/v1/payment_intents/pay_000000000000000000000000');
    expect(loggedBody('{"at": 1733480000123456789000}')).toBe('{"at": 1733480000123456789000}');
    expect(loggedBody('{"note": "card 4111 1111 1111 1111"}')).toBe('{"note": "card [REDACTED]"}');
  });
});

describe('the whole-body tests that let a clean body skip the walk', () => {
  it('judges a body with JSON escapes of white space and quotes on what they spell', () => {
    // A GraphQL request as clients send it: a `\n` on every line of the document.
    const query = 'mutation {\n  a: login(password: "hunter2") { ok }\n  b: x(id: "4242 4242 4242 4242") { id }\n}';
    expect(JSON.parse(loggedBody(JSON.stringify({ query }))!).query).toBe('mutation {\n  a: login(password: "[REDACTED]") { ok }\n  b: x(id: "[REDACTED]") { id }\n}');
    // A name split by an escaped newline or tab is the name (isSecretName squeezes white space out).
    expect(loggedBody('{"pass\\nword": "hunter2", "api\\tkey": "k1", "keep": "a\\nb"}')).toBe('{"pass\\nword": "[REDACTED]", "api\\tkey": "[REDACTED]", "keep": "a\\nb"}');
    // An escaped backslash before `u0073` is text, not an escape: nothing to redact, body unchanged.
    const clean = '{"query": "{\\n paymentIntent(id: \\"pay_1\\") { id } }", "note": "C:\\\\u0073k_x"}';
    expect(loggedBody(clean)).toBe(clean);
    // Any other escape sends the body through the walk, which decodes it.
    expect(loggedBody('{"note": "\\u0073k_test_abc\\n"}')).toBe('{"note": "[REDACTED]\\n"}');
  });

  it('finds every run of 13 digits with single separators, wherever it stands', () => {
    // The scan reads every 13th character: the same answers as reading each one, on random texts.
    const reference = (text: string) => /\d(?:[ -]?\d){12}/.test(text);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from({ length: Math.floor(next() * 60) }, () => '0123456789 -a"'[Math.floor(next() * 14)]).join('');
      expect(mayHaveShape(text), JSON.stringify(text)).toBe(reference(text));
    }
  });
});

describe('the whole-text test of secret names', () => {
  it('finds every name of the list, however split, and passes names that are none', () => {
    for (const name of [...SECRET_NAME_LISTS.endings, ...SECRET_NAME_LISTS.names]) {
      const split = [...name].join('_');
      expect(mayNameASecret(`{"${split.toUpperCase()}": 1}`), name).toBe(true);
      expect(mayNameASecret(`my ${name}: 1`), name).toBe(true);
    }
    expect(mayNameASecret('{"desk": "company", "shipping": 1, "key_id": "key_1", "pinned": true}')).toBe(false);
    // Where a name only starts with an ending, it names no secret (isSecretName agrees): a payment's key id.
    expect(mayNameASecret('{"apiKeyId": "key_1", "api_key_id": "key_2", "tokenized": true}')).toBe(false);
    expect(mayNameASecret('{"apiKeys": 1}')).toBe(true);
    expect(mayNameASecret('{"client_secret_key": 1}')).toBe(true);
  });
});

describe('echoes of a request’s secrets in its answer', () => {
  it('takes the values of secret-named fields out of the answer, wherever it quotes them', () => {
    const bodies = loggedBodies(
      JSON.stringify({ query: 'query($password: ID!) { x(id: $password) }', variables: { password: ['hunter2-long'], keep: 'kept-value' } }),
      JSON.stringify({ errors: [{ message: 'Variable "$password" got invalid value ["hunter2-long"]; kept-value stays' }] }),
    );
    expect(bodies.request).not.toContain('hunter2-long');
    expect(bodies.response).toBe(JSON.stringify({ errors: [{ message: 'Variable "$password" got invalid value ["[REDACTED]"]; kept-value stays' }] }));
  });
});
