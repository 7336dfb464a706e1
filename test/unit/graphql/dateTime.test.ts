import { expect, it } from 'vitest';
import { DateTimeScalar, isCanonicalIso } from '../../../src/graphql/scalars';

/** DateTime answers a timestamp string as it is only when formatting it again would give the same text. */
it('takes a string as it is only when new Date(s).toISOString() gives it back, and every such 4-digit-year one', () => {
  const samples = [
    '2026-11-28T12:07:19.358Z',
    '2024-02-29T00:00:00.000Z', // leap day
    '2026-02-29T00:00:00.000Z', // not a leap year: Date rolls it over to March 1
    '1900-02-29T00:00:00.000Z', // not a leap year either
    '2000-02-29T23:59:59.999Z',
    '2026-04-31T00:00:00.000Z',
    '2026-12-31T23:59:59.999Z',
    '2026-01-01T24:00:00.000Z', // the next day's midnight to Date
    '2026-13-01T00:00:00.000Z',
    '2026-11-28T12:07:19Z',
    '2026-11-28T12:07:19.358+00:00',
    '0000-01-01T00:00:00.000Z',
    '+012026-01-01T00:00:00.000Z',
    ' 2026-11-28T12:07:19.358Z',
    'not a date',
  ];
  // Every day of two years, one of them a leap year, at a time that ends a day.
  for (const year of [2024, 2026]) {
    for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 86_400_000) samples.push(new Date(t + 86_399_999).toISOString());
  }
  for (const s of samples) {
    const parsed = new Date(s);
    const roundTrips = !Number.isNaN(parsed.getTime()) && parsed.toISOString() === s;
    // Extended years (+012026-...) round-trip too but are left to Date: only the common form is taken as is.
    expect(isCanonicalIso(s), s).toBe(roundTrips && !s.startsWith('+') && !s.startsWith('-'));
    if (!Number.isNaN(parsed.getTime())) expect(DateTimeScalar.serialize(s), s).toBe(parsed.toISOString());
  }
  expect(() => DateTimeScalar.serialize('2026-13-01T00:00:00.000Z')).toThrow(/cannot represent/);
});
