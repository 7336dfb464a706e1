import { useEffect, useRef, type ReactNode } from 'react';
import { clockAheadSentence } from '../format';
import { useSandboxClockQuery } from '../hooks/clock';
import { BASE, Link } from '../router';
import { SandboxClockContext, useSandboxClock } from './Time';

/**
 * Reads the account's clock for the whole signed-in page (again at each navigation, so an advance made
 * elsewhere shows up) and says when it is ahead of real time: payments then carry times days away from
 * the wall clock, and a reader should know why. A key without sandbox:read just gets no banner.
 */
export function SandboxClockProvider({ path, children }: { path: string; children: ReactNode }) {
  const [result, reexecute] = useSandboxClockQuery();
  const shownPath = useRef(path);
  useEffect(() => {
    if (shownPath.current === path) return; // the first reading is the query's own
    shownPath.current = path;
    reexecute({ requestPolicy: 'network-only' });
  }, [path, reexecute]);
  const offsetSeconds = result.data?.sandboxClock.offsetSeconds ?? 0;
  const refresh = () => reexecute({ requestPolicy: 'network-only' });
  return <SandboxClockContext.Provider value={{ offsetSeconds, refresh }}>{children}</SandboxClockContext.Provider>;
}

export function ClockBanner({ onClockPage }: { onClockPage: boolean }) {
  const { offsetSeconds } = useSandboxClock();
  if (offsetSeconds <= 0) return null;
  return (
    <p className="clock-banner" data-testid="clock-banner">
      {clockAheadSentence(offsetSeconds)}.{' '}
      {onClockPage ? 'Reset the sandbox to bring it back.' : <Link href={`${BASE}/clock`}>Open the clock</Link>}
    </p>
  );
}
