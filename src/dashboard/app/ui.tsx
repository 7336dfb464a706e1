import { useEffect, useRef, type ReactNode } from 'react';

/** One view: sets the document title and takes focus on its heading, so a screen reader hears where a navigation led. */
export function Page({ title, heading, children }: { title: string; heading?: ReactNode; children: ReactNode }) {
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Sandbox dashboard`;
    h1.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <>
      <h1 ref={h1} tabIndex={-1}>
        {heading ?? title}
      </h1>
      {children}
    </>
  );
}

/** A status in words and colour (the word carries the meaning; the colour only helps). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase()}`}>{status}</span>;
}

export function Loading({ what }: { what: string }) {
  return <p className="muted">Loading {what}…</p>;
}

/** An amount in kwanza: a whole number (the API takes integers), with the numeric keypad on phones. */
export function AmountField({ label = 'Amount (AOA)', value, onChange, min = 100 }: { label?: string; value: string; onChange: (value: string) => void; min?: number }) {
  return (
    <label>
      {label}
      <input type="number" inputMode="numeric" min={min} step={1} value={value} onChange={(e) => onChange(e.target.value)} required />
    </label>
  );
}
