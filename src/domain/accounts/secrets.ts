import { hash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../../ids';

/** A new key secret: `sk_test_` / `pk_test_` + 32 base62 characters from the CSPRNG. */
export function newKeySecret(prefix: 'sk_test_' | 'pk_test_'): string {
  return prefix + randomBase62(32);
}

/** SHA-256, hex. Every key request hashes its bearer: the one-shot `hash` is about a third of `createHash`'s cost. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
