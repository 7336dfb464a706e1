import type { CombinedError } from 'urql';

/**
 * A load that failed, said for a person: what could not be shown and why, never an empty list in its
 * place. A refusal for too many requests says to wait; the gateway's own message otherwise.
 */
export function LoadFailed({ what, error, onRetry }: { what: string; error?: CombinedError | null; onRetry: () => void }) {
  if (!error) return null;
  const gql = error.graphQLErrors[0];
  const why =
    gql?.extensions?.code === 'rate_limit_exceeded'
      ? 'too many requests in the last minute; wait a moment'
      : gql
        ? gql.message
        : 'the gateway did not answer';
  return (
    <div role="alert" className="error load-failed">
      <p>
        Could not load {what}: {why}.
      </p>
      <button type="button" className="secondary" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
