import { describe, expect, it } from 'vitest';
import { bodyFingerprint, canonicalJson } from '../../../src/domain/idempotency/canonicalJson';

describe('idempotency body comparison', () => {
  it('ignores key order at every level', () => {
    const a = { amount: 100, customer: { mobile: '923000000', x: 1 }, metadata: { a: '1', b: '2' } };
    const b = { metadata: { b: '2', a: '1' }, customer: { x: 1, mobile: '923000000' }, amount: 100 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(bodyFingerprint(a)).toBe(bodyFingerprint(b));
  });

  it('keeps array order significant and tells values apart', () => {
    expect(bodyFingerprint({ m: ['a', 'b'] })).not.toBe(bodyFingerprint({ m: ['b', 'a'] }));
    expect(bodyFingerprint({ amount: 100 })).not.toBe(bodyFingerprint({ amount: '100' }));
    expect(bodyFingerprint({ amount: 100 })).not.toBe(bodyFingerprint({ amount: 101 }));
    expect(bodyFingerprint({ a: null })).not.toBe(bodyFingerprint({}));
  });

  it('treats a missing body like null', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(bodyFingerprint(undefined)).toBe(bodyFingerprint(null));
  });
});
