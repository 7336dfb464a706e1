import { addHook } from '../../platform/hookList';

/**
 * What else ends when an API key is revoked: its open WebSocket and SSE connections (src/realtime) and
 * the dashboard sessions signed in with it (src/domain/sessions). src/realtime sits above the domain,
 * and the sessions import this area (a session acts for a key), so this area calls neither:
 * src/server.ts registers them here when a gateway starts (docs/architecture.md): each gateway its own
 * connections' closer, removed when it stops; the sessions' once (registering one twice keeps one).
 */
export type KeyRevokedHook = (keyId: string) => Promise<void> | void;

// eslint-disable-next-line no-restricted-syntax -- a revocation here ends the key's sockets and sessions on every gateway of the process
const hooks: KeyRevokedHook[] = [];

/** Runs `hook` after every revocation in this process, after those registered before it; returns its removal. */
export function onKeyRevoked(hook: KeyRevokedHook): () => void {
  return addHook(hooks, hook);
}

/** Called by revokeApiKey once the key is marked revoked: each hook in turn, in registration order. */
export async function keyRevoked(keyId: string): Promise<void> {
  for (const hook of hooks) await hook(keyId);
}
