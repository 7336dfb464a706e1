import { useEffect, useState } from 'react';
import { gql, useMutation } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { formatDuration, formatTime } from '../format';
import { Page } from '../ui';

const CLOCK = gql`
  query DashboardClock {
    sandboxClock {
      now
      offsetSeconds
    }
  }
`;

const ADVANCE = gql`
  mutation DashboardAdvanceClock($seconds: Int!) {
    advanceSandboxClock(input: { seconds: $seconds }) {
      now
      offsetSeconds
    }
  }
`;

const STEPS: Array<[label: string, seconds: number]> = [
  ['Advance 1 minute', 60],
  ['Advance 1 hour', 3600],
  ['Advance 72 hours', 72 * 3600],
];

interface ClockState {
  now: string;
  offsetSeconds: number;
}

/** The account's sandbox clock. Advancing it fires the timers due in the span (references expire after 72 h). */
export function Clock() {
  const [result] = useLiveQuery<{ sandboxClock: ClockState }>({ query: CLOCK });
  const [advanced, setAdvanced] = useState<{ clock: ClockState; at: number } | null>(null);
  const [state, advance] = useMutation<{ advanceSandboxClock: ClockState }>(ADVANCE);
  const [readAt, setReadAt] = useState(Date.now());
  const [tick, setTick] = useState(Date.now());
  useEffect(() => setReadAt(Date.now()), [result.data]);
  useEffect(() => {
    const timer = setInterval(() => setTick(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  // The sandbox time runs with real time from the last reading (the offset only moves when advanced).
  const latest = advanced && advanced.at >= readAt ? advanced : result.data ? { clock: result.data.sandboxClock, at: readAt } : null;
  const now = latest ? new Date(Date.parse(latest.clock.now) + Math.max(0, tick - latest.at)).toISOString() : null;

  const step = async (seconds: number) => {
    const res = await advance({ seconds });
    if (res.data) setAdvanced({ clock: res.data.advanceSandboxClock, at: Date.now() });
  };

  return (
    <Page title="Clock">
      <p>Each account has its own sandbox clock. Advancing it fires what falls due meanwhile: unpaid references expire 72 hours after creation, checkout sessions after 30 minutes.</p>
      <ErrorAlert error={result.error ?? state.error} />
      {latest && (
        <dl className="facts">
          <dt>Sandbox time</dt>
          <dd data-testid="sandbox-time">{formatTime(now)}</dd>
          <dt>Offset</dt>
          <dd data-testid="sandbox-offset">
            {latest.clock.offsetSeconds} s{latest.clock.offsetSeconds > 0 && ` (${formatDuration(latest.clock.offsetSeconds)} ahead of real time)`}
          </dd>
        </dl>
      )}
      <div className="actions">
        {STEPS.map(([label, seconds]) => (
          <button key={seconds} type="button" disabled={state.fetching} onClick={() => step(seconds)}>
            {label}
          </button>
        ))}
      </div>
      <p aria-live="polite" className="muted">
        {advanced && !state.fetching ? `Advanced: the offset is now ${advanced.clock.offsetSeconds} s.` : ''}
      </p>
    </Page>
  );
}
