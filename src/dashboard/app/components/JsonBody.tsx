import { useId, useState } from 'react';
import { CopyButton } from './CopyButton';

/** A JSON body indented for reading; a body that is not JSON (or cut short, ending in "…") is shown as it is. */
export function prettyJson(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/**
 * A request body that was signed: indented for reading, with "Exact bytes" to see it as sent (what a
 * receiver's signature check hashes, one line) and a Copy button that always copies the exact bytes.
 */
export function SignedBody({ body, testId }: { body: string; testId?: string }) {
  const [exact, setExact] = useState(false);
  const id = useId();
  return (
    <>
      <label className="check" htmlFor={id}>
        <input id={id} type="checkbox" checked={exact} onChange={(e) => setExact(e.target.checked)} /> Exact bytes, as signed
      </label>
      <pre className="bytes json" data-testid={testId}>
        {exact ? body : prettyJson(body)}
      </pre>
      <CopyButton value={body} what="request body (exact bytes)" />
    </>
  );
}
