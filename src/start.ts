import { loadConfig } from './config';
import { startDataDir, startEmbeddedEarly } from './db/embeddedEngine';

/**
 * `npm start`'s entry (build.mjs bundles it as dist/main.js, and the gateway as dist/gateway.js). Without
 * MONGODB_URI it asks for the embedded engine first, so that the engine reads its data directory on the
 * second core while this thread loads the gateway's bundle (parsing and evaluating ~8 MB of JavaScript,
 * about a second), then runs the gateway, which takes that engine (src/db/embeddedEngine.ts). A restart on a
 * large data directory is then about as long as the engine's load, not the sum of both (bench/HISTORY.md).
 * A configuration the gateway will refuse starts nothing here (no data directory is created for a start
 * that fails): the gateway reports it, as before.
 */
if (configIsValid() && !process.env.MONGODB_URI?.trim()) startEmbeddedEarly(startDataDir(process.env));

function configIsValid(): boolean {
  try {
    loadConfig();
    return true;
  } catch {
    return false;
  }
}

// A computed specifier, so that esbuild leaves the gateway in its own bundle instead of inlining it here.
const gateway = import.meta.url.endsWith('.ts') ? './main.ts' : './gateway.js';
await import(gateway);
