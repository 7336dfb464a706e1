import { useEffect, useRef, useState, type FormEvent } from 'react';
import { signIn, type ApiErrorBody, type DashboardSession } from '../session';

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
            {error.code}: {error.message}
          </p>
        )}
      </form>
    </main>
  );
}
