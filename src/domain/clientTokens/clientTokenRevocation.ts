import { addHook } from '../../platform/hookList';

/**
 * What else ends when a client token is revoked in this process: its open streams (src/realtime). That
 * floor sits above the domain, so src/server.ts registers the hook here when a gateway starts, as with
 * keyRevocation.ts. Other processes learn of it by their own check (src/realtime/clientTokenStreams.ts).
 */
export type ClientTokenRevokedHook = (tokenId: string) => void;

// eslint-disable-next-line no-restricted-syntax -- a revocation here ends the token's streams on every gateway of the process
const hooks: ClientTokenRevokedHook[] = [];

/** Runs `hook` after every revocation in this process (each gateway its own streams'); returns its removal. */
export function onClientTokenRevoked(hook: ClientTokenRevokedHook): () => void {
  return addHook(hooks, hook);
}

/** Called by deleteClientToken once the token is gone. A hook's failure never fails the DELETE. */
export function clientTokenRevoked(tokenId: string): void {
  for (const hook of hooks) {
    try {
      hook(tokenId);
    } catch {
      // the streams' own check ends them within its interval
    }
  }
}
