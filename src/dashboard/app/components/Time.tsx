import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { clockLabel, formatRelative, formatTime, type ClockName } from '../format';

/** The account's clock offset as the shell last read it (0 until read); `refresh` reads it again (after advancing or a reset). */
export interface SandboxClockState {
  offsetSeconds: number;
  refresh: () => void;
}

export const SandboxClockContext = createContext<SandboxClockState>({ offsetSeconds: 0, refresh: () => undefined });

export const useSandboxClock = () => useContext(SandboxClockContext);

/**
 * Inside it, Time leaves out "(sandbox time)": a list says which clock its times are on once, in its
 * column header (ClockNote), instead of on every row.
 */
const ClockNamedAbove = createContext(false);

export function ClockNamed({ children }: { children: ReactNode }) {
  return <ClockNamedAbove.Provider value={true}>{children}</ClockNamedAbove.Provider>;
}

/** " (sandbox time)" for a column header while the sandbox clock is ahead; nothing otherwise. */
export function ClockNote({ clock }: { clock: ClockName }) {
  const label = clockLabel(clock, useSandboxClock().offsetSeconds);
  return label ? <span className="clock-label"> ({label})</span> : null;
}

/** Re-renders every `ms` while mounted, for texts that age ("3 min ago"). */
function useTick(ms: number, enabled: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!enabled) return;
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms, enabled]);
  return now;
}

/**
 * A time, said on its clock: "2026-11-25 10:02:03 UTC" or, `relative`, "in 3 min" (against that clock's
 * now: the sandbox's is real time plus the offset). While the sandbox clock is ahead it adds which clock
 * it is on ("(sandbox time)"), because the two then differ by days, unless a ClockNamed around it says
 * so once for the whole list. The exact time is in `title` and
 * `dateTime` either way.
 */
export function Time({ iso, clock, relative = false }: { iso: string | null | undefined; clock: ClockName; relative?: boolean }) {
  const { offsetSeconds } = useSandboxClock();
  const namedAbove = useContext(ClockNamedAbove);
  const now = useTick(15_000, relative);
  if (!iso) return <>—</>;
  const label = namedAbove ? null : clockLabel(clock, offsetSeconds);
  const clockNow = now + (clock === 'sandbox' ? offsetSeconds * 1000 : 0);
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {relative ? formatRelative(iso, clockNow) : formatTime(iso)}
      {label && <span className="clock-label"> ({label})</span>}
    </time>
  );
}
