/**
 * The WebSockets (and GraphQL streams over HTTP) this process holds for each dashboard session, so that
 * signing out closes them at once (a revoked key's are closed by src/realtime/connections.ts, which
 * knows them by key). Keyed by the cookie value's hash, like the stored session. Another process's
 * sockets of the session are refused at their next operation (each checks the session again).
 * Beside the service, which closes them on sign-out: it holds only close functions, whatever the
 * protocol registered (src/graphql/ws.ts, httpSubscriptions/run.ts).
 */
// eslint-disable-next-line no-restricted-syntax -- sessions are the database's: a sign-out on any gateway here closes their sockets on all
const closers = new Map<string, Set<() => void>>();

/** Registers a socket's close; returns the function that forgets it (call it when the socket closes). */
export function trackSessionSocket(sessionHash: string, close: () => void): () => void {
  let set = closers.get(sessionHash);
  if (!set) closers.set(sessionHash, (set = new Set()));
  set.add(close);
  return () => {
    set.delete(close);
    if (set.size === 0 && closers.get(sessionHash) === set) closers.delete(sessionHash);
  };
}

/** Closes every socket of a session that ended (sign-out). */
export function closeSessionSockets(sessionHash: string): void {
  for (const close of [...(closers.get(sessionHash) ?? [])]) close();
  closers.delete(sessionHash);
}
