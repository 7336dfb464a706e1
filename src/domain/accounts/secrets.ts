import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../../ids';

/** A new key secret: `sk_test_` / `pk_test_` + 32 base62 characters from the CSPRNG. */
export function newKeySecret(prefix: 'sk_test_' | 'pk_test_'): string {
  return prefix + randomBase62(32);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
