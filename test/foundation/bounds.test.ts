import { describe, expect, it } from 'vitest';
import { hitLocalRateLimit, LOCAL_WINDOWS_MAX, localWindowCount } from '../../src/domain/ratelimit/rateLimitService';

/**
 * The in-process structures that client traffic fills, each pushed past its stated bound
 * (docs/operations.md, "Bounds"). Structures reachable only through thousands of real connections are
 * tried on the structure itself; the others beside their modules' tests, as the table says.
 */
describe('bounds of in-process structures', () => {
  it('per-address windows counted in memory stay at LOCAL_WINDOWS_MAX, the newest kept', () => {
    // One window per distinct client address (maintenance refusals, a database that fails the count):
    // an attacker with many addresses (IPv6) tries to make the map grow without end.
    const now = Date.now();
    const addresses = LOCAL_WINDOWS_MAX * 2 + 500;
    for (let i = 0; i < addresses; i++) hitLocalRateLimit(`ip:bounds:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 5, now);
    expect(localWindowCount()).toBe(LOCAL_WINDOWS_MAX);

    // The newest windows are the ones kept: the last address's second request counts as its second.
    const last = addresses - 1;
    const again = hitLocalRateLimit(`ip:bounds:10.${last >> 16}.${(last >> 8) & 255}.${last & 255}`, 5, now);
    expect(again.remaining).toBe(3);
    // The first address's window was evicted: it starts again at one.
    expect(hitLocalRateLimit('ip:bounds:10.0.0.0', 5, now).remaining).toBe(4);
    expect(localWindowCount()).toBe(LOCAL_WINDOWS_MAX);

    // Once their minute is over, every window goes at the next count, whatever address it is for.
    hitLocalRateLimit('ip:bounds:late', 5, now + 61_000);
    expect(localWindowCount()).toBe(1);
  });
});
