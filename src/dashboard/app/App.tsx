import { useEffect, useMemo, useRef, useState } from 'react';
import { Provider } from 'urql';
import { createDashboardClient, LiveContext, type Live } from './graphql';
import { BASE, Link, navigate, useLocation } from './router';
import { NavMenu } from './components/NavMenu';
import { LiveIndicator } from './components/LiveIndicator';
import { ClockBanner, SandboxClockProvider } from './components/ClockBanner';
import { currentSession, signOut, type DashboardSession } from './session';
import { SignIn } from './views/SignIn';
import { Overview } from './views/Overview';
import { Payments } from './views/Payments';
import { PaymentDetail } from './views/PaymentDetail';
import { Clock } from './views/Clock';
import { Webhooks } from './views/Webhooks';
import { EndpointPage } from './views/webhooks/EndpointPage';
import { PaymentLinks } from './views/PaymentLinks';
import { CheckoutSessions } from './views/CheckoutSessions';
import { Events } from './views/Events';
import { Logs } from './views/Logs';
import { ApiKeys } from './views/ApiKeys';

/** The navigation, in the order and with the names the contract decisions fix. */
const NAV: Array<[label: string, path: string]> = [
  ['Overview', BASE],
  ['Payments', `${BASE}/payments`],
  ['Webhooks', `${BASE}/webhooks`],
  ['Payment links', `${BASE}/payment-links`],
  ['Checkout sessions', `${BASE}/checkout-sessions`],
  ['Events', `${BASE}/events`],
  ['Logs', `${BASE}/logs`],
  ['API keys', `${BASE}/api-keys`],
  ['Clock', `${BASE}/clock`],
];

export function App() {
  // undefined: not known yet (the first GET /dashboard/session is under way).
  const [session, setSession] = useState<DashboardSession | null | undefined>(undefined);
  const [startError, setStartError] = useState<string | null>(null);
  useEffect(() => {
    currentSession().then(setSession, (err: Error) =>
      // fetch's own TypeError ("Failed to fetch") says nothing to a person.
      setStartError(err instanceof TypeError ? 'The gateway could not be reached. Check that it is running, then reload the page.' : err.message),
    );
  }, []);

  if (startError) return <main><p role="alert" className="error">{startError}</p></main>;
  if (session === undefined) return <main><p className="muted">Loading…</p></main>;
  if (session === null) {
    return <SignIn onSignedIn={setSession} />;
  }
  return <SignedIn key={session.key.id} session={session} onSignedOut={() => setSession(null)} />;
}

function SignedIn({ session, onSignedOut }: { session: DashboardSession; onSignedOut: () => void }) {
  const [live, setLive] = useState<Live>({ generation: 0, connected: false, subscriptions: 0 });
  // The session may end while the page is open (sign-out elsewhere, key revoked, 12 h passed): when the
  // socket is refused, ask the server, and show the sign-in form if the session is gone.
  const signedOut = useRef(onSignedOut);
  signedOut.current = onSignedOut;
  // One client (and socket) for the whole signed-in life of the page.
  const { client, ws } = useMemo(
    () =>
      createDashboardClient({
        onConnected: (wasRetry) => setLive((l) => ({ ...l, generation: l.generation + (wasRetry ? 1 : 0), connected: true })),
        onClosed: (code) => {
          setLive((l) => ({ ...l, connected: false }));
          if (code !== 1000) currentSession().then((s) => s === null && signedOut.current(), () => undefined);
        },
        onSubscriptions: (subscriptions) => setLive((l) => ({ ...l, subscriptions })),
      }),
    [],
  );
  useEffect(() => () => void ws.dispose(), [ws]);

  const { path } = useLocation();

  const doSignOut = async () => {
    await signOut();
    await ws.dispose();
    navigate(BASE, { replace: true });
    onSignedOut();
  };

  return (
    <Provider value={client}>
      <LiveContext.Provider value={live}>
        <SandboxClockProvider path={path}>
          <a className="skip" href="#main">Skip to content</a>
          <header className="top">
            <p className="brand">
              Sandbox dashboard <span className="muted">· {session.account.name}</span>
            </p>
            <LiveIndicator />
          </header>
          <NavMenu items={NAV} path={path} onSignOut={doSignOut} />
          <main id="main">
            <ClockBanner onClockPage={path === `${BASE}/clock`} />
            {route(path)}
          </main>
        </SandboxClockProvider>
      </LiveContext.Provider>
    </Provider>
  );
}

function route(path: string) {
  const rest = path.startsWith(`${BASE}/`) ? path.slice(BASE.length + 1) : '';
  const [view, id] = rest.split('/').map(decodeURIComponent);
  switch (view) {
    case 'payments':
      return id ? <PaymentDetail key={id} id={id} /> : <Payments />;
    case 'webhooks':
      return id ? <EndpointPage key={id} id={id} /> : <Webhooks />;
    case 'payment-links':
      return <PaymentLinks />;
    case 'checkout-sessions':
      return <CheckoutSessions />;
    case 'events':
      return <Events />;
    case 'logs':
      return <Logs />;
    case 'api-keys':
      return <ApiKeys />;
    case 'clock':
      return <Clock />;
    case undefined:
    case '':
      return <Overview />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page at {path}. <Link href={`${BASE}/payments`}>Go to the payments</Link>.
          </p>
        </>
      );
  }
}
