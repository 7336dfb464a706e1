import { useEffect, useState } from 'react';
import { ErrorAlert, throwIfError } from '../graphql';
import { formatDuration, formatNumber, formatTime } from '../format';
import { useAdvanceClock, useResetSandbox, useSandboxClockQuery, type SandboxResetCounts as Deleted } from '../hooks/clock';
import { ConfirmButton } from '../components/ConfirmDialog';
import { useSandboxClock } from '../components/Time';
import { Page } from '../ui';

const STEPS: Array<[label: string, seconds: number]> = [
  ['Advance 1 minute', 60],
  ['Advance 1 hour', 3600],
  ['Advance 72 hours', 72 * 3600],
];

/** What a reset deleted, in the words of the page (REST field order): one and many. */
const DELETED: Array<[key: keyof Deleted, one: string, many: string]> = [
  ['paymentIntents', 'payment', 'payments'],
  ['refunds', 'refund', 'refunds'],
  ['events', 'event', 'events'],
  ['webhookDeliveries', 'webhook delivery', 'webhook deliveries'],
  ['paymentLinks', 'payment link', 'payment links'],
  ['checkoutSessions', 'checkout session', 'checkout sessions'],
  ['logs', 'request log', 'request logs'],
];

/** The account's sandbox clock. Advancing it fires the timers due in the span (references expire after 72 h). */
export function Clock() {
  const [result, refetch] = useSandboxClockQuery();
  const [state, advance] = useAdvanceClock();
  const [, reset] = useResetSandbox();
  const shell = useSandboxClock();
  const [deleted, setDeleted] = useState<Deleted | null>(null);
  const [readAt, setReadAt] = useState(Date.now());
  const [tick, setTick] = useState(Date.now());
  useEffect(() => setReadAt(Date.now()), [result.data]);
  useEffect(() => {
    const timer = setInterval(() => setTick(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  // The sandbox time runs with real time from the last reading (the offset only moves when advanced).
  const clock = result.data?.sandboxClock;
  const now = clock ? new Date(Date.parse(clock.now) + Math.max(0, tick - readAt)).toISOString() : null;
  const changed = () => {
    refetch({ requestPolicy: 'network-only' });
    shell.refresh();
  };

  const step = async (seconds: number) => {
    setDeleted(null);
    const res = await advance({ seconds });
    if (res.data) changed();
  };

  const doReset = async () => {
    const res = await reset({});
    // The dialog shows the message: in words, never the error's code.
    throwIfError(res);
    const { clock: _clock, ...counts } = res.data!.resetSandbox;
    setDeleted(counts);
    changed();
  };

  return (
    <Page title="Clock">
      <p>Each account has its own sandbox clock. Advancing it fires what falls due meanwhile: unpaid references expire 72 hours after creation, checkout sessions after 30 minutes.</p>
      <ErrorAlert error={result.error ?? state.error} />
      {clock && (
        <dl className="facts">
          <dt>Sandbox time</dt>
          <dd data-testid="sandbox-time">{formatTime(now)}</dd>
          <dt>Offset</dt>
          <dd data-testid="sandbox-offset" data-seconds={clock.offsetSeconds}>
            {clock.offsetSeconds > 0 ? `${formatDuration(clock.offsetSeconds)} ahead of real time` : '0 s (real time)'}
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
        {state.data && !state.fetching && !deleted ? `Advanced: the sandbox clock is now ${formatDuration(state.data.advanceSandboxClock.offsetSeconds)} ahead.` : ''}
      </p>

      <section className="card" aria-labelledby="reset-title">
        <h2 id="reset-title">Start over</h2>
        <p>Deletes this account's test data and sets the clock back to real time. Keeps the account, its API keys and its webhook endpoints.</p>
        <ConfirmButton
          title="Reset the sandbox?"
          description={
            <p>
              Every payment, refund, event, webhook delivery, payment link, checkout session and request log of this account is deleted, and pending timers are dropped. API keys and webhook endpoints stay. This cannot be undone.
            </p>
          }
          confirmLabel="Reset sandbox"
          action={doReset}
        >
          Reset sandbox
        </ConfirmButton>
        <div aria-live="polite">
          {deleted && (
            <div data-testid="reset-result">
              <p>The sandbox was reset. Deleted:</p>
              <ul>
                {DELETED.map(([key, one, many]) => (
                  <li key={key}>
                    {formatNumber(deleted[key])} {deleted[key] === 1 ? one : many}
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      </section>
    </Page>
  );
}
