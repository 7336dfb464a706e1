/** Display helpers shared by the views. */

/** 7500 → "7 500 AOA" (the grouping the payment pages use). */
export function formatAmount(amount: number | null | undefined, currency = 'AOA'): string {
  if (amount == null) return '—';
  return `${String(amount).replace(/\B(?=(\d{3})+(?!\d))/g, '\u00a0')} ${currency}`;
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

/** PAYMENT_SUCCEEDED → "payment.succeeded", the REST spelling integrators see in webhooks. */
export function eventTypeName(type: string): string {
  return type.toLowerCase().replace(/_/, '.');
}

/** 259200 → "3 d 0 h 0 min 0 s". */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const parts = [
    [Math.floor(s / 86400), 'd'],
    [Math.floor((s % 86400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
    [s % 60, 's'],
  ] as const;
  const first = parts.findIndex(([n]) => n > 0);
  return first < 0 ? '0 s' : parts.slice(first).map(([n, u]) => `${n} ${u}`).join(' ');
}
