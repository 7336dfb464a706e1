import { Fragment, useState, type FormEvent, type ReactNode } from 'react';
import { formatNumber } from '../../format';
import { throwIfError } from '../../graphql';
import { useClearChaos, useSetChaos, type Chaos } from '../../hooks/webhooks';
import { ConfirmButton, ConfirmDialog } from '../../components/ConfirmDialog';

/** Terms and values as a list of facts named `label`. */
function Facts({ label, rows }: { label: string; rows: [string, ReactNode][] }) {
  return (
    <dl className="facts" aria-label={label}>
      {rows.map(([term, value]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

const copies = (n: number) => `${formatNumber(n)} forged ${n === 1 ? 'copy' : 'copies'}`;

/**
 * What the chaos report means for the merchant, in one sentence: whether their receiver refused the
 * forged copies (spec, Authentication rule 7) — a warning when it accepted any.
 */
export function ChaosVerdict({ report }: { report: Chaos['report'] }) {
  const { forgedSent, forgedRejected, forgedAccepted } = report;
  if (forgedAccepted > 0) {
    return (
      <p role="alert" className="error verdict" data-verdict="unsafe">
        Your receiver accepted {formatNumber(forgedAccepted)} of {copies(forgedSent)}: it does not verify signatures (or their timestamps) as it must. Anyone could send it
        fake events.
      </p>
    );
  }
  if (forgedSent === 0) {
    return (
      <p className="verdict muted" data-verdict="none">
        No forged copies sent yet: they go with the next deliveries (set “Bad signature” or “Stale timestamp” above 0 %).
      </p>
    );
  }
  return (
    <p className="verdict ok" data-verdict="safe">
      Your receiver rejected {formatNumber(forgedRejected)} of {copies(forgedSent)}.
    </p>
  );
}

/** The verdict and the report's numbers. */
export function ChaosReport({ report, label }: { report: Chaos['report']; label: string }) {
  return (
    <>
      <ChaosVerdict report={report} />
      <Facts
        label={label}
        rows={[
          ['Forged copies sent', formatNumber(report.forgedSent)],
          ['Forged rejected', formatNumber(report.forgedRejected)],
          ['Forged accepted', formatNumber(report.forgedAccepted)],
          ['Duplicates sent', formatNumber(report.duplicatesSent)],
          ['Reordered', formatNumber(report.reordered)],
          ['Delayed', formatNumber(report.delayed)],
        ]}
      />
    </>
  );
}

/** The form's fields: probabilities as whole percentages, the delay in ms, the seed (empty: the gateway picks). */
interface Draft {
  duplicate: string;
  reorder: string;
  badSignature: string;
  staleTimestamp: string;
  delayMin: string;
  delayMax: string;
  seed: string;
}

const PERCENT_FIELDS: [keyof Draft, string][] = [
  ['badSignature', 'Bad signature (%)'],
  ['staleTimestamp', 'Stale timestamp (%)'],
  ['duplicate', 'Duplicate (%)'],
  ['reorder', 'Reorder (%)'],
];

const pct = (p: number | undefined) => String(Math.round((p ?? 0) * 100));
const toDraft = (c: Chaos | null): Draft => ({
  duplicate: pct(c?.duplicate),
  reorder: pct(c?.reorder),
  badSignature: pct(c?.badSignature ?? (c ? 0 : 1)),
  staleTimestamp: pct(c?.staleTimestamp),
  delayMin: String(c?.delayMs?.min ?? 0),
  delayMax: String(c?.delayMs?.max ?? 0),
  seed: c?.seed != null ? String(c.seed) : '',
});

type ChaosInput = Parameters<ReturnType<typeof useSetChaos>[1]>[0]['input'];

/** The draft as the mutation's input, or what is wrong with it, in words with the fields' labels. */
function parseDraft(d: Draft): { input: ChaosInput } | { error: string } {
  const input: ChaosInput = {};
  for (const [key, label] of PERCENT_FIELDS) {
    const n = Number(d[key]);
    if (d[key].trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) return { error: `${label} must be a number from 0 to 100.` };
    (input as Record<string, number>)[key] = n / 100;
  }
  const min = Number(d.delayMin);
  const max = Number(d.delayMax);
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > 60000) return { error: 'The delay must be whole milliseconds from 0 to 60000.' };
  if (min > max) return { error: '“Delay from (ms)” must not be above “Delay to (ms)”.' };
  if (max > 0) input.delayMs = { min, max };
  if (d.seed.trim() !== '') {
    const seed = Number(d.seed);
    if (!Number.isInteger(seed)) return { error: 'Seed must be a whole number (or empty: the gateway picks one).' };
    input.seed = seed;
  }
  return { input };
}

/** What a receiver will get with these settings, for the question before they apply. */
function consequence(input: ChaosInput): string {
  const parts: string[] = [];
  const p = (x: number | null | undefined) => `${Math.round((x ?? 0) * 100)} %`;
  if (input.badSignature) parts.push(`a forged copy with a wrong signature before ${p(input.badSignature)} of deliveries`);
  if (input.staleTimestamp) parts.push(`a copy with a stale timestamp before ${p(input.staleTimestamp)}`);
  if (input.duplicate) parts.push(`a duplicate after ${p(input.duplicate)}`);
  if (input.reorder) parts.push(`${p(input.reorder)} held back until the next one is sent`);
  if (input.delayMs) parts.push(`each first attempt delayed by ${input.delayMs.min} to ${input.delayMs.max} ms`);
  return parts.length ? `Your receiver gets ${parts.join('; ')}.` : 'With every setting at 0, deliveries go as usual.';
}

/**
 * Chaos on a push endpoint, set from the page: the settings as a form, each change asked first (it
 * changes what the receiver gets and restarts the report), and the report as a verdict. Turning it off
 * keeps the report of the run that ended on screen.
 */
export function ChaosPanel({ endpointId, chaos, onChanged }: { endpointId: string; chaos: Chaos | null; onChanged: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => toDraft(chaos));
  const [invalid, setInvalid] = useState<string | null>(null);
  const [asking, setAsking] = useState<ChaosInput | null>(null);
  const [ended, setEnded] = useState<Chaos | null>(null);
  const [, setChaos] = useSetChaos();
  const [, clear] = useClearChaos();
  const on = Boolean(chaos?.enabled);
  // Folded while chaos is off, so that a phone reaches the deliveries first.
  const [formOpen, setFormOpen] = useState(on);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseDraft(draft);
    if ('error' in parsed) return setInvalid(parsed.error);
    setInvalid(null);
    setAsking(parsed.input);
  };
  const apply = async () => {
    if (!asking) return;
    const res = await setChaos({ id: endpointId, input: asking });
    throwIfError(res);
    setEnded(null);
    onChanged();
  };
  const turnOff = async () => {
    const res = await clear({ id: endpointId });
    throwIfError(res);
    setEnded(res.data?.clearWebhookChaos ?? null);
    onChanged();
  };

  return (
    <section className="card chaos" aria-labelledby="chaos-title" data-testid="chaos">
      <h2 id="chaos-title">
        Chaos <span className={`badge ${on ? 'tone-wait' : 'tone-info'}`}>{on ? 'On' : 'Off'}</span>
      </h2>
      <p className="muted">What real networks do to webhooks, on purpose: forged copies your receiver must refuse, duplicates, reordering and delays.</p>
      {on && chaos && <ChaosReport report={chaos.report} label="Chaos report" />}
      {!on && ended && (
        <>
          <p className="muted">Turned off. What the run did:</p>
          <ChaosReport report={ended.report} label="Chaos report of the run that ended" />
        </>
      )}
      <details className="chaos-form" open={formOpen} onToggle={(e) => setFormOpen(e.currentTarget.open)}>
        <summary>{on ? 'Settings' : 'Set up chaos'}</summary>
        <form onSubmit={submit} noValidate>
          <div className="chaos-fields">
            {PERCENT_FIELDS.map(([key, label]) => (
              <label key={key}>
                {label}
                <input type="number" inputMode="numeric" min={0} max={100} value={draft[key]} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} />
              </label>
            ))}
            <label>
              Delay from (ms)
              <input type="number" inputMode="numeric" min={0} max={60000} value={draft.delayMin} onChange={(e) => setDraft({ ...draft, delayMin: e.target.value })} />
            </label>
            <label>
              Delay to (ms)
              <input type="number" inputMode="numeric" min={0} max={60000} value={draft.delayMax} onChange={(e) => setDraft({ ...draft, delayMax: e.target.value })} />
            </label>
            <label>
              Seed (optional)
              <input type="number" inputMode="numeric" value={draft.seed} onChange={(e) => setDraft({ ...draft, seed: e.target.value })} />
            </label>
          </div>
          {invalid && (
            <p role="alert" className="error">
              {invalid}
            </p>
          )}
          <div className="actions">
            <button type="submit">{on ? 'Change chaos settings' : 'Turn chaos on'}</button>
            {on && (
              <ConfirmButton
                title="Turn chaos off?"
                description={<p>Your receiver gets only genuine deliveries again. The report of this run stays on this page until you leave it.</p>}
                confirmLabel="Turn chaos off"
                action={turnOff}
              >
                Turn chaos off
              </ConfirmButton>
            )}
          </div>
        </form>
      </details>
      {asking && (
        <ConfirmDialog
          title={on ? 'Change chaos settings?' : 'Turn chaos on?'}
          description={
            <p>
              {consequence(asking)} The report starts again from zero.
            </p>
          }
          confirmLabel={on ? 'Change settings' : 'Turn chaos on'}
          onConfirm={apply}
          onClose={() => setAsking(null)}
        />
      )}
    </section>
  );
}
