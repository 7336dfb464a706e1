// Entry of the gateway's background thread when the gateway runs from source (tsx: `npm run dev`, the
// tests' gateway processes): registers tsx in the thread (loaders are per thread) before importing the
// TypeScript. The bundle (`npm start`) runs dist/background.js instead.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
