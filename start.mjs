// start.mjs — `npm start`: rebuilds the targets whose inputs changed (build.mjs), then runs the bundle
// (dist/main.js), in one process.
//
// Why not a `prestart` script: npm runs a lifecycle script through a shell and a node process of its own,
// one after the other before `start`'s, and that second process start lay on the critical path of every
// start (about 0.3 s of CPU; bench/README.md, Round 26). Here the check is a few ms of stat() calls in
// the process that then runs the gateway. Plain JavaScript for the same reason as build.mjs.
import { buildTargets } from './build.mjs';

if ((await buildTargets(undefined, { ifStale: true })).length > 0) {
  // esbuild's service process is not needed by a gateway that runs for days.
  (await import('esbuild')).stop();
}
await import('./dist/main.js');
