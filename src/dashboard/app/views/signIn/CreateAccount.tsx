import { useId, useState, type FormEvent } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { createSandboxAccount, signIn, type ApiErrorBody, type DashboardSession, type NewSandboxAccount } from '../../session';

/**
 * "No account yet?" on the sign-in page: creates a sandbox account with the API's public operation
 * (POST /v1/sandbox/accounts), shows its secret key once, with a copy button, and signs in with it.
 * The key lives in this component's state only until the person goes on; it is never stored.
 */
export function CreateAccount({ onSignedIn }: { onSignedIn: (session: DashboardSession) => void }) {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<NewSandboxAccount | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ids = { name: useId(), error: useId(), key: useId() };

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch {
      setError('The gateway could not be reached. Check that it is running and try again.');
    } finally {
      setBusy(false);
    }
  };

  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const name = String(new FormData(e.currentTarget).get('name') ?? '').trim();
    void run(async () => {
      const result = await createSandboxAccount(name);
      if (result.ok) setCreated(result.account);
      else setError(accountWords(result.error));
    });
  };

  const continueIn = () =>
    void run(async () => {
      const result = await signIn(created!.sk);
      if (!result.ok) return setError(accountWords(result.error));
      setCreated(null);
      onSignedIn(result.session);
    });

  if (created) {
    return (
      <section className="new-account" aria-labelledby="new-account-title">
        <h2 id="new-account-title">Your sandbox account is ready</h2>
        <p>
          {created.name} <span className="muted">({created.id})</span>
        </p>
        <p id={ids.key}>
          <strong>Secret key, shown only now.</strong> Copy it and keep it: the gateway stores only its hash, and you need it for the API and to sign in
          again.
        </p>
        <p className="secret-line">
          <code aria-describedby={ids.key}>{created.sk}</code> <CopyButton value={created.sk} what="secret key" />
        </p>
        <button type="button" onClick={continueIn} disabled={busy}>
          I have copied it: open the dashboard
        </button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </section>
    );
  }

  if (!open) {
    return (
      <p className="new-account-offer">
        No account yet?{' '}
        <button type="button" className="secondary" onClick={() => setOpen(true)}>
          Create a sandbox account
        </button>
      </p>
    );
  }

  return (
    <form className="new-account" onSubmit={create} noValidate aria-labelledby="create-account-title">
      <h2 id="create-account-title">Create a sandbox account</h2>
      <p className="muted">A test account with its own keys; no real money moves. Its secret key is shown once, then you are signed in with it.</p>
      <label htmlFor={ids.name}>Account name (optional)</label>
      <input id={ids.name} name="name" maxLength={100} autoComplete="organization" aria-describedby={error ? ids.error : undefined} />
      <button type="submit" disabled={busy}>
        Create account
      </button>
      {error && (
        <p role="alert" id={ids.error} className="error">
          {error}
        </p>
      )}
    </form>
  );
}

/** The account creation's refusals, for the person at the form. */
function accountWords(error: ApiErrorBody): string {
  switch (error.code) {
    case 'rate_limit_exceeded':
      return 'Too many accounts were created from this address just now. Wait a minute and try again.';
    case 'invalid_request':
      return `The account name was not accepted: ${error.message}`;
    case 'maintenance':
    case 'service_unavailable':
      return 'The gateway is unavailable for a moment. Try again shortly.';
    default:
      return 'The account could not be created. Try again in a moment.';
  }
}
