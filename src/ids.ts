import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * CSPRNG bytes drawn 4 KiB at a time: a request makes several ids, and one `randomBytes` call per id
 * was ~3 % of a POST's CPU. Each byte is used once.
 */
const POOL_SIZE = 4096;
/* eslint-disable no-restricted-syntax -- random bytes drawn 4 KiB at a time for the process: any gateway's ids may use them */
let pool = Buffer.alloc(0);
let poolAt = 0;
/* eslint-enable no-restricted-syntax */

function nextRandomByte(): number {
  if (poolAt >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/**
 * `length` characters drawn uniformly from base62 with a CSPRNG. Bytes >= 248 are rejected so that
 * every character is equally likely (248 = 62 * 4).
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextRandomByte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

export type IdPrefix =
  | 'acct' | 'pay' | 'rf' | 'plink' | 'cs' | 'whe' | 'evt' | 'qr' | 'whd' | 'key' | 'req' | 'tmr' | 'ctok';

/** Public identifiers: prefix, underscore, 24 random base62 characters (contract decisions). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Digits only, uniformly random, from the CSPRNG (reference numbers, entities). */
export function randomDigits(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextRandomByte();
    if (b < 250) out += String(b % 10);
  }
  return out;
}
