import { readFileSync } from 'node:fs';
import { parse, type EnumTypeDefinitionNode } from 'graphql';
import { expect, it } from 'vitest';
import { eventTypeToRest } from '../../src/graphql/enums';
import { clockAheadSentence, clockLabel, eventTypeName, formatAmount, formatDuration, formatMs, formatNumber, formatRelative } from '../../src/dashboard/app/format';
import type { EventType } from '../../generated/graphql/resolvers-types';

/** The dashboard's display helpers (src/dashboard/app/format.ts), on the values the views hand them. */

it('writes every event type of schema.graphql as the REST contract does (checkout.session.completed)', () => {
  const schema = parse(readFileSync('schema.graphql', 'utf8'));
  const enumType = schema.definitions.find((d): d is EnumTypeDefinitionNode => d.kind === 'EnumTypeDefinition' && d.name.value === 'EventType');
  const values = enumType!.values!.map((v) => v.name.value as EventType);
  expect(values).toContain('CHECKOUT_SESSION_COMPLETED');
  for (const type of values) expect(eventTypeName(type), type).toBe(eventTypeToRest(type));
  expect(eventTypeName('CHECKOUT_SESSION_COMPLETED')).toBe('checkout.session.completed');
});

it('groups digits with no-break spaces and writes money with its currency or the kwanza sign', () => {
  expect(formatNumber(1_234_567)).toBe('1\u00a0234\u00a0567');
  expect(formatNumber(999)).toBe('999');
  expect(formatNumber(93.456, 1)).toBe('93.5');
  expect(formatAmount(10_000)).toBe('10\u00a0000 AOA');
  expect(formatAmount(10_000, 'AOA', { symbol: true })).toBe('10\u00a0000 Kz');
  expect(formatAmount(null)).toBe('—');
});

it('says durations in their two largest units, and latencies in ms or s', () => {
  expect(formatDuration(524_550)).toBe('6 d 1 h');
  expect(formatDuration(259_200)).toBe('3 d');
  expect(formatDuration(86_400 + 300)).toBe('1 d'); // a gap (0 h) ends it: "1 d 5 min" would mislead
  expect(formatDuration(3_725)).toBe('1 h 2 min');
  expect(formatDuration(0)).toBe('0 s');
  expect(formatDuration(90_000, { long: true })).toBe('1 day 1 hour');
  expect(formatMs(87)).toBe('87 ms');
  expect(formatMs(1_234)).toBe('1.2 s');
});

it('says how long ago or how soon, and which clock a time is on only while the sandbox is ahead', () => {
  const now = Date.parse('2026-11-25T10:00:00Z');
  expect(formatRelative('2026-11-25T09:57:00Z', now)).toBe('3 min ago');
  expect(formatRelative('2026-11-25T10:00:02Z', now)).toBe('just now');
  expect(formatRelative('2026-11-25T12:30:00Z', now)).toBe('in 2 h'); // the largest unit only: a relative time is a glance
  expect(clockLabel('sandbox', 0)).toBe('');
  expect(clockLabel('sandbox', 60)).toBe('sandbox time');
  expect(clockLabel('real', 60)).toBe('real time');
  expect(clockAheadSentence(6 * 86_400)).toBe('Sandbox clock is 6 days ahead of real time');
});
