import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `length` characters drawn uniformly from base62 with a CSPRNG. Bytes >= 248 are rejected so that
 * every character is equally likely (248 = 62 * 4).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const b of bytes) {
      if (b >= 248) continue;
      out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix =
  | 'acct' | 'pay' | 'rf' | 'plink' | 'cs' | 'whe' | 'evt' | 'qr' | 'whd' | 'key' | 'req' | 'tmr';

/** Public identifiers: prefix, underscore, 24 random base62 characters (contract decisions). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Digits only, uniformly random, from the CSPRNG (reference numbers, entities). */
export function randomDigits(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b >= 250) continue;
      out += String(b % 10);
      if (out.length === length) break;
    }
  }
  return out;
}
