import { describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES, loggedBody } from '../../src/domain/logs/logBodies';

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
