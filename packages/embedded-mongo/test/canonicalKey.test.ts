import { Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson';
import { describe, expect, it } from 'vitest';
import { canonicalKey } from '../src/values';

/**
 * canonicalKey is what _id maps, unique-index hashes and de-duplication key on: values MongoDB
 * holds equal must share a key, and any two others must not. Strings are their own keys, so the
 * strings that look like other values' keys are listed here on purpose.
 */
const GROUPS: unknown[][] = [
  [1, 1.0, Long.fromNumber(1), new Int32(1), new Double(1), Decimal128.fromString('1')],
  [0, -0, Long.ZERO],
  [2.5, new Double(2.5)],
  [null, undefined],
  [''],
  ['1'],
  ['n1'],
  ['\0n1'],
  ['\0'],
  ['\0s'],
  ['\0s\0n1'],
  ['s'],
  ['z'],
  ['\0z'],
  ['a'],
  ['ab'],
  [['a']],
  [['a', 'b']],
  [['ab']],
  [['\0n1']],
  [[1]],
  [{ a: 1 }],
  [{ a: '1' }],
  [{ a: 1, b: 2 }],
  [{ b: 2, a: 1 }],
  [true],
  [false],
  ['true'],
  [new Date(5)],
  ['\0d5'],
  [new ObjectId('65a000000000000000000001')],
  ['65a000000000000000000001'],
  [new Binary(Buffer.from('ab'))],
  [new Timestamp({ t: 1, i: 2 })],
  [new MinKey()],
  [new MaxKey()],
  ['-'],
  ['+'],
];

describe('canonicalKey', () => {
  it('gives equal values one key and different values different keys', () => {
    const owner = new Map<string, number>();
    GROUPS.forEach((group, g) => {
      const keys = new Set(group.map(canonicalKey));
      expect(keys.size, JSON.stringify(group.map(String))).toBe(1);
      const key = [...keys][0]!;
      expect(owner.get(key), `${String(group[0])} collides`).toBeUndefined();
      owner.set(key, g);
    });
  });

  it('is the string itself for a string that does not start with NUL', () => {
    const s = 'pi_3QmX9Zr0AbCdEfGh';
    expect(canonicalKey(s)).toBe(s);
    expect(canonicalKey('')).toBe('');
    expect(canonicalKey('\0x')).not.toBe('\0x');
  });
});
