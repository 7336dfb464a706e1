import { describe, expect, it } from 'vitest';
import { computeFee, CURRENT_FEE_VERSION } from '../../../src/domain/payments/fees';

describe('fee rule version 1', () => {
  it('charges 1.5 % on express and 2.0 % on reference', () => {
    expect(computeFee('multicaixa_express', 15_000)).toEqual({ fee: 225, fee_version: 1 });
    expect(computeFee('multicaixa_reference', 25_000)).toEqual({ fee: 500, fee_version: 1 });
    expect(computeFee('multicaixa_express', 5_000_000)).toEqual({ fee: 75_000, fee_version: 1 });
    expect(computeFee('multicaixa_reference', 50_000_000)).toEqual({ fee: 1_000_000, fee_version: 1 });
  });

  it('rounds half up', () => {
    // 1.5 % of 1 100 = 16.5 → 17; of 1 099 = 16.485 → 16; of 1 101 = 16.515 → 17
    expect(computeFee('multicaixa_express', 1_100).fee).toBe(17);
    expect(computeFee('multicaixa_express', 1_099).fee).toBe(16);
    expect(computeFee('multicaixa_express', 1_101).fee).toBe(17);
    // 2 % of 125 = 2.5 → 3; of 124 = 2.48 → 2; of 175 = 3.5 → 4
    expect(computeFee('multicaixa_reference', 125).fee).toBe(3);
    expect(computeFee('multicaixa_reference', 124).fee).toBe(2);
    expect(computeFee('multicaixa_reference', 175).fee).toBe(4);
    // 1.5 % of 100 = 1.5 → 2; of 233 = 3.495 → 3; of 234 = 3.51 → 4
    expect(computeFee('multicaixa_express', 100).fee).toBe(2);
    expect(computeFee('multicaixa_express', 233).fee).toBe(3);
    expect(computeFee('multicaixa_express', 234).fee).toBe(4);
  });

  it('is at least 1 AOA', () => {
    expect(computeFee('multicaixa_express', 1).fee).toBe(1);
    expect(computeFee('multicaixa_express', 33).fee).toBe(1); // 0.495 → 0 → raised to 1
    expect(computeFee('multicaixa_reference', 0).fee).toBe(1);
  });

  it('stamps the rule version', () => {
    expect(CURRENT_FEE_VERSION).toBe(1);
    expect(computeFee('multicaixa_express', 100).fee_version).toBe(CURRENT_FEE_VERSION);
  });

  it('rejects amounts that are not non-negative integers', () => {
    expect(() => computeFee('multicaixa_express', 10.5)).toThrow(RangeError);
    expect(() => computeFee('multicaixa_express', -1)).toThrow(RangeError);
  });
});
