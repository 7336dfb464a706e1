// Entry of the engine's worker thread (src/threaded.ts) when it runs from source: registers tsx in the
// worker (loaders are per thread) before importing the TypeScript. Bundles point at their own compiled entry.
import { register } from 'tsx/esm/api';

register();
await import('../src/workerMain.ts');
