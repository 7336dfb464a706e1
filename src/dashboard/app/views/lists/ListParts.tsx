import { useState, type ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { EmptyState } from '../../components/EmptyState';
import { Loading } from '../../ui';
import './lists.css';

/**
 * Why a list could not load, for a person: what failed and what to do, the gateway's own message after
 * it (those are written for people; the error code and argument names are not shown).
 */
export function loadFailure(what: string, error: CombinedError): string {
  const gql = error.graphQLErrors[0];
  const code = String(gql?.extensions?.code ?? '');
  if (code === 'rate_limit_exceeded') return `The ${what} could not be loaded: this dashboard made too many requests in the last minute. Wait a moment; the list loads again on its own.`;
  if (code === 'invalid_request' && gql) return `The ${what} could not be loaded: ${gql.message}`;
  if (gql) return `The ${what} could not be loaded: ${gql.message}`;
  return `The ${what} could not be loaded: the gateway did not answer. Check your connection; the list loads again when it reconnects.`;
}

/**
 * What a list shows besides its rows: its failure in words (never an empty state then: nothing was
 * read), "Loading" before the first answer, the empty state once an answer had no rows.
 */
export function ListStatus({ what, error, loaded, empty, emptyTitle, children }: { what: string; error?: CombinedError; loaded: boolean; empty: boolean; emptyTitle: string; children?: ReactNode }) {
  if (error)
    return (
      <p role="alert" className="error">
        {loadFailure(what, error)}
      </p>
    );
  if (!loaded) return <Loading what={what} />;
  return empty ? <EmptyState title={emptyTitle}>{children}</EmptyState> : null;
}

/** Previous and Next under a list, only when there is another page to go to (a lone page has no pager). */
export function ListPager({ what, hasPrevious, hasNext, onPrevious, onNext }: { what: string; hasPrevious: boolean; hasNext: boolean; onPrevious: () => void; onNext: () => void }) {
  if (!hasPrevious && !hasNext) return null;
  return (
    <div className="list-pager" role="group" aria-label={`Pages of ${what}`}>
      {hasPrevious ? (
        <button type="button" className="secondary" onClick={onPrevious}>
          Previous
        </button>
      ) : (
        <span />
      )}
      {hasNext && (
        <button type="button" className="secondary" onClick={onNext}>
          Next
        </button>
      )}
    </div>
  );
}

/**
 * A text filter that changes the list when it is submitted (Enter, the button) or left, not at each
 * keystroke: each change is a request, and half an id matches nothing.
 */
export function TextFilter({ label, value, onChange, placeholder, hint }: { label: string; value: string; onChange: (value: string) => void; placeholder?: string; hint?: string }) {
  const [text, setText] = useState(value);
  const commit = () => {
    if (text.trim() !== value) onChange(text.trim());
  };
  return (
    <form
      className="text-filter"
      onSubmit={(e) => {
        e.preventDefault();
        commit();
      }}
    >
      <label>
        {label}
        <input type="search" value={text} placeholder={placeholder} onChange={(e) => setText(e.target.value)} onBlur={commit} />
      </label>
      {hint && <p className="hint muted">{hint}</p>}
    </form>
  );
}

/** A select filter: "" is "any". */
export function SelectFilter<T extends string>({ label, value, onChange, options, any = 'Any' }: { label: string; value: string; onChange: (value: T | '') => void; options: ReadonlyArray<readonly [T, string]>; any?: string | null }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value as T | '')}>
        {any !== null && <option value="">{any}</option>}
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}
