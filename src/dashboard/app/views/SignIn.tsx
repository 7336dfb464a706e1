import { useEffect, useRef, useState, type FormEvent } from 'react';
import { signIn, type ApiErrorBody, type DashboardSession } from '../session';
import { CreateAccount } from './signIn/CreateAccount';

/**
 * GET /dashboard without a session. The key field is uncontrolled on purpose: React writes a controlled
 * input's value into its `value` attribute, which would put the key in the page's HTML. The field is
 * emptied as soon as the key is sent; the key is held nowhere else.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (session: DashboardSession) => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = 'Sign in · Sandbox dashboard';
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const input = field.current!;
    const key = input.value.trim();
    input.value = '';
    setBusy(true);
    setError(null);
    try {
      const result = await signIn(key);
      if (result.ok) return onSignedIn(result.session);
      setError(result.error);
      input.focus();
    } catch (err) {
      setError({ code: 'network_error', message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sandbox dashboard</h1>
      <p>Sign in with your account's secret key (<code>sk_test_…</code>) or a restricted key. The key is sent once; the dashboard then holds a session, never the key.</p>
      <form onSubmit={submit} noValidate>
        <label htmlFor="secret-key">Secret key</label>
        <input
          id="secret-key"
          ref={field}
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'sign-in-error' : undefined}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" id="sign-in-error" className="error">
            {explain(error)}
          </p>
        )}
      </form>
      <CreateAccount onSignedIn={onSignedIn} />
    </main>
  );
}

/** The refusal written for the person at the form rather than for an API client: no error code on screen. */
function explain(error: ApiErrorBody): string {
  switch (error.code) {
    case 'authentication_failed':
      return "That key was not accepted. Paste a secret key (sk_test_…) from your account (the one printed when it was created), or a restricted key made from it. Publishable keys (pk_test_…) cannot sign in.";
    case 'rate_limit_exceeded':
      return 'Too many attempts with this key just now. Wait a minute and try again.';
    case 'network_error':
      return `The gateway could not be reached (${error.message}). Check that it is running and try again.`;
    case 'permission_denied':
      return 'A publishable key (pk_test_…) cannot open the dashboard: sign in with a secret (sk_test_…) or restricted key.';
    default:
      return 'The dashboard could not sign you in just now. Try again in a moment.';
  }
}
