/**
 * The dashboard session (contract decisions, "Sandbox dashboard"): the secret key is posted once to
 * POST /dashboard/session and the server answers with an HttpOnly cookie the page cannot read. The key
 * passes through this module only as an argument: it is never stored, put in a URL or rendered.
 */
export interface DashboardSession {
  account: { id: string; name: string };
  key: { id: string; type: string; permissions: string[] };
  expires_at: string;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  request_id?: string;
}

export type SignInResult = { ok: true; session: DashboardSession } | { ok: false; error: ApiErrorBody };

const SESSION_URL = '/dashboard/session';

async function errorOf(res: Response): Promise<ApiErrorBody> {
  const body = await res.json().catch(() => undefined);
  return body?.error ?? { code: `http_${res.status}`, message: res.statusText || 'The request failed' };
}

export async function signIn(secretKey: string): Promise<SignInResult> {
  const res = await fetch(SESSION_URL, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ key: secretKey }),
  });
  if (res.ok) return { ok: true, session: await res.json() };
  return { ok: false, error: await errorOf(res) };
}

/** The current session, or null when there is none (401). */
export async function currentSession(): Promise<DashboardSession | null> {
  const res = await fetch(SESSION_URL, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (res.status === 401) return null;
  // Said to a person (App shows it as it is): what happened and what to do, no error code.
  if (!res.ok) {
    const { code } = await errorOf(res);
    throw new Error(
      code === 'rate_limit_exceeded'
        ? 'Too many requests from this address just now: wait a minute, then reload the page.'
        : `The dashboard could not read your session (the gateway answered HTTP ${res.status}). Reload the page to try again.`,
    );
  }
  return res.json();
}

export async function signOut(): Promise<void> {
  await fetch(SESSION_URL, { method: 'DELETE', credentials: 'same-origin' });
}

/** A new sandbox account (POST /sandbox/accounts, the API's public operation): its secret key is shown once. */
export interface NewSandboxAccount {
  id: string;
  name: string;
  sk: string;
}

export type CreateAccountResult = { ok: true; account: NewSandboxAccount } | { ok: false; error: ApiErrorBody };

export async function createSandboxAccount(name: string): Promise<CreateAccountResult> {
  const res = await fetch('/v1/sandbox/accounts', {
    method: 'POST',
    credentials: 'omit',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(name ? { name } : {}),
  });
  if (!res.ok) return { ok: false, error: await errorOf(res) };
  const body = (await res.json()) as NewSandboxAccount;
  return { ok: true, account: { id: body.id, name: body.name, sk: body.sk } };
}
