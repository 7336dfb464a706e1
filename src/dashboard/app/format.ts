/**
 * Display helpers shared by the views. One locale throughout: English words and digits, with the
 * grouping the gateway's payment pages use (a no-break space every three digits: `1 234 567`), so that
 * an amount reads the same on the dashboard and on the page the customer saw.
 */

const GROUP = '\u00a0';
const numbers = new Map<number, Intl.NumberFormat>();

/** 1234567 → "1 234 567"; 0.935 with 1 digit → "0.9". Never breaks inside a number. */
export function formatNumber(value: number, maximumFractionDigits = 0): string {
  let format = numbers.get(maximumFractionDigits);
  if (!format) numbers.set(maximumFractionDigits, (format = new Intl.NumberFormat('en-US', { maximumFractionDigits })));
  return format
    .formatToParts(value)
    .map((p) => (p.type === 'group' ? GROUP : p.value))
    .join('');
}

/** 7500 → "7 500 AOA"; with `symbol`, "7 500 Kz" (the kwanza's sign, as shops in Angola write it). */
export function formatAmount(amount: number | null | undefined, currency = 'AOA', { symbol = false } = {}): string {
  if (amount == null) return '—';
  // A plain space before the currency, as the payment pages write it (src/pages/html.ts).
  return `${formatNumber(amount)} ${symbol && currency === 'AOA' ? 'Kz' : currency}`;
}

/** 0.935 → "93.5 %"; null (nothing final yet) → "—". */
export function formatPercent(ratio: number | null | undefined): string {
  return ratio == null ? '—' : `${formatNumber(ratio * 100, 1)}${GROUP}%`;
}

/** ISO time → "2026-11-25 10:02:03 UTC": the sandbox clock is what matters here, so UTC, not the viewer's zone. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** MULTICAIXA_EXPRESS → "Multicaixa Express". */
export function formatEnum(value: string | null | undefined): string {
  if (!value) return '—';
  const words = value.toLowerCase().split('_');
  return words.map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w)).join(' ').replace(/^Multicaixa (\w)/, (_m, c: string) => `Multicaixa ${c.toUpperCase()}`);
}

/**
 * CHECKOUT_SESSION_COMPLETED → "checkout.session.completed": the REST spelling integrators see in
 * webhooks. Every EventType's REST name is its GraphQL name in lower case with each underscore a dot
 * (codegen holds schema.graphql to that; test/dashboard/format.test.ts checks every value).
 */
export function eventTypeName(type: string): string {
  return type.toLowerCase().replaceAll('_', '.');
}

const UNITS = [
  [86400, 'd', 'day'],
  [3600, 'h', 'hour'],
  [60, 'min', 'minute'],
  [1, 's', 'second'],
] as const;

/**
 * 524550 → "6 d 1 h"; with `long`, "6 days 1 hour". The two largest units that are not zero (below them
 * is noise at that scale: nobody needs the seconds of a 6-day offset).
 */
export function formatDuration(totalSeconds: number, { long = false } = {}): string {
  let rest = Math.max(0, Math.floor(totalSeconds));
  const parts: string[] = [];
  for (const [size, short, word] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 && parts.length < 2) parts.push(long ? `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}` : `${formatNumber(n)} ${short}`);
    else if (parts.length > 0) break; // "1 d 0 h 5 min" would be read as 1 d 5 min anyway: stop at the first gap
  }
  return parts.length ? parts.join(' ') : long ? '0 seconds' : '0 s';
}

/** A latency: 87 → "87 ms", 1234 → "1.2 s". */
export function formatMs(ms: number | null | undefined): string {
  if (ms == null) return '—';
  return ms < 1000 ? `${formatNumber(ms)} ms` : `${formatNumber(ms / 1000, 1)} s`;
}

/**
 * How far `iso` is from `nowMs`: "just now", "3 min ago", "in 2 h". `nowMs` is on the same clock as
 * `iso` (the sandbox's for payments and deliveries, real time for logs and keys).
 */
export function formatRelative(iso: string, nowMs: number): string {
  const seconds = Math.round((Date.parse(iso) - nowMs) / 1000);
  if (Math.abs(seconds) < 5) return 'just now';
  const span = formatDuration(Math.abs(seconds)).split(' ').slice(0, 2).join(' ');
  return seconds < 0 ? `${span} ago` : `in ${span}`;
}

/** Which clock a time was written on: payments and all the rail makes use the sandbox's, logs and keys real time. */
export type ClockName = 'sandbox' | 'real';

/**
 * "sandbox time" or "real time" while the sandbox clock is ahead (the two then disagree and a reader must
 * know which one a time is on); "" while they agree, when saying it would only be noise.
 */
export function clockLabel(clock: ClockName, offsetSeconds: number): string {
  if (offsetSeconds <= 0) return '';
  return clock === 'sandbox' ? 'sandbox time' : 'real time';
}

/** The banner's sentence: "Sandbox clock is 6 days ahead of real time". */
export function clockAheadSentence(offsetSeconds: number): string {
  return `Sandbox clock is ${formatDuration(offsetSeconds, { long: true })} ahead of real time`;
}
