import { createHmac } from 'node:crypto';
import { UsageError } from '../errors';

/**
 * `pgw listen --chaos duplicate=0.2,reorder=0.1,bad_signature=0.1`: what the gateway's chaos per endpoint
 * does to webhooks (docs/webhooks.md, "Testing your receiver"), done to the events this listener
 * forwards. Each choice is drawn from HMAC-SHA256(seed, event id), so a run with the same `seed` makes
 * the same choices for the same events; the CLI keeps no state between choices.
 */
export type ForgedKind = 'bad_signature' | 'stale_timestamp';

export interface ListenChaos {
  duplicate: number;
  reorder: number;
  bad_signature: number;
  stale_timestamp: number;
  /** `delay_ms=MIN-MAX`: the first forward waits between MIN and MAX ms. */
  delay: { min: number; max: number } | null;
  seed: number;
}

export interface ChaosChoices {
  forged: ForgedKind[];
  duplicate: boolean;
  reorder: boolean;
  delayMs: number;
}

const PROBABILITIES = ['duplicate', 'reorder', 'bad_signature', 'stale_timestamp'] as const;
export const REORDER_HOLD_MAX_MS = 10_000;
export const STALE_TIMESTAMP_AGE_S = 3_600;
const MAX_DELAY_MS = 60_000;

function usage(detail: string): UsageError {
  return new UsageError(`--chaos ${detail}; e.g. --chaos duplicate=0.2,reorder=0.1,bad_signature=0.1,delay_ms=0-2000,seed=42`);
}

/** Parses the flag's value; undefined when the flag was not given. */
export function parseChaos(raw: string | undefined, pickSeed: () => number = () => Math.floor(Math.random() * 2 ** 31)): ListenChaos | undefined {
  if (raw === undefined) return undefined;
  const chaos: ListenChaos = { duplicate: 0, reorder: 0, bad_signature: 0, stale_timestamp: 0, delay: null, seed: pickSeed() };
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name, value = ''] = part.split('=', 2).map((s) => s.trim()) as [string, string?];
    if ((PROBABILITIES as readonly string[]).includes(name)) {
      const p = Number(value);
      if (value === '' || !Number.isFinite(p) || p < 0 || p > 1) throw usage(`${name} must be a probability from 0 to 1, got '${value}'`);
      chaos[name as (typeof PROBABILITIES)[number]] = p;
    } else if (name === 'delay_ms') {
      const m = /^(\d+)-(\d+)$/.exec(value);
      if (!m || Number(m[1]) > Number(m[2]) || Number(m[2]) > MAX_DELAY_MS) throw usage(`delay_ms must be MIN-MAX in ms, 0 to ${MAX_DELAY_MS}, got '${value}'`);
      chaos.delay = { min: Number(m[1]), max: Number(m[2]) };
    } else if (name === 'seed') {
      if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw usage(`seed must be an integer, got '${value}'`);
      chaos.seed = Number(value);
    } else {
      throw usage(`does not know '${name}'`);
    }
  }
  return chaos;
}

/** The choices for one event: the same for the same seed and event id. */
export function chaosChoices(chaos: ListenChaos, eventId: string): ChaosChoices {
  const digest = createHmac('sha256', String(chaos.seed)).update(eventId).digest();
  const draw = (i: number) => digest.readUInt32BE(i * 4) / 2 ** 32;
  const forged: ForgedKind[] = [];
  if (draw(2) < chaos.bad_signature) forged.push('bad_signature');
  if (draw(3) < chaos.stale_timestamp) forged.push('stale_timestamp');
  const d = chaos.delay;
  return { forged, duplicate: draw(0) < chaos.duplicate, reorder: draw(1) < chaos.reorder, delayMs: d ? d.min + Math.floor(draw(4) * (d.max - d.min + 1)) : 0 };
}

/** A secret the listener never printed, for the bad_signature copy. */
export function wrongSecret(chaos: ListenChaos, eventId: string): string {
  return `whsec_${createHmac('sha256', String(chaos.seed)).update(`wrong:${eventId}`).digest('hex').slice(0, 32)}`;
}
