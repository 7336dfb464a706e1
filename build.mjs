// build.mjs — the compiled gateway and the dashboard app: esbuild bundles into dist/ what `npm run dev` runs
// through tsx, and the browser app the gateway serves at /dashboard.
//
//   npm run build     (node build.mjs)              every target below
//   npm start         (start.mjs: buildTargets --if-stale, then dist/main.js)   builds only the targets an input of which changed
//   node build.mjs --only=dashboard [--if-stale]    one target (the dashboard tests build theirs this way)
//
// Targets:
// - gateway: dist/main.js (`npm start`'s entry, src/start.ts: starts the embedded engine's worker, then loads
//   dist/gateway.js, the gateway), dist/background.js (the gateway's background thread: timers and their webhooks),
//   dist/db.js (`npm run db`'s engine), dist/engine-worker.js (the engine's worker).
// - dashboard: dist/dashboard/app.js and app.css, the React app of /dashboard (src/dashboard/app), minified
//   for browsers. Served by src/dashboard/assetsRouter.ts; no CDN and nothing built at run time.
//
// Why a gateway bundle: a start through tsx compiles ~400 TypeScript files, and even precompiled, Node spends most
// of a start resolving, reading and wrapping the ~1 500 files of src/ and node_modules one by one. One file
// holding everything reaches /readyz in well under half the time (README, "Scripts"). npm packages are
// bundled too: they are most of those files (with them left in node_modules, a start took 1.6 s of CPU
// instead of 1.1 s), and they work bundled (test/system/compiledStart.test.ts starts the bundle and
// exercises REST, GraphQL, the docs and the pages).
//
// Plain JavaScript, so that the staleness check of every `npm start` costs a few ms, not tsx's start.
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
/** Inputs esbuild does not list: this script's options, the lockfile npm installs from, npm's own install record. */
const CONFIG_INPUTS = ['build.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'node_modules/.package-lock.json'];

/** @type {import('esbuild').BuildOptions} */
const GATEWAY = {
  absWorkingDir: ROOT,
  entryPoints: { main: 'src/start.ts', gateway: 'src/main.ts', background: 'src/background/worker.ts', db: 'packages/embedded-mongo/src/cli.ts', 'engine-worker': 'packages/embedded-mongo/src/workerMain.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS packages inside an ESM bundle call require() for Node's built-ins (and for optional
  // packages, in try/catch): give the bundle a real one.
  // mingo (the engine's query matching) ships ESM and CommonJS; esbuild's `node` condition picks the
  // CommonJS build, about twice the bytes and ~60 ms more to evaluate in the engine's worker at every
  // start (measured on dist/engine-worker.js: 1,030,867 -> 559,092 bytes, 162-188 -> 90-128 ms).
  // The directory, so that subpaths (mingo/core, mingo/query) resolve to their ESM files too.
  // Apollo hashes each request's query with @apollo/utils.createhash, which falls back to a JavaScript
  // SHA-256 in a bundle: src/graphql/apolloCreateHash.ts gives it node:crypto's.
  alias: { mingo: './node_modules/mingo/esm', '@apollo/utils.createhash': './src/graphql/apolloCreateHash.ts' },
  // The OpenTelemetry SDK is loaded only when tracing is asked for (src/tracing/tracing.ts): left in
  // node_modules, it costs a start with tracing off nothing, not even the parsing of its code.
  external: ['@opentelemetry/*'],
  banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);" },
  // dist/*.js.map point into src/ and node_modules rather than carrying copies of them. Node reads them
  // only with --enable-source-maps (NODE_OPTIONS=--enable-source-maps npm start), which adds ~0.5 s to a
  // start: worth it when reading a stack trace, not by default.
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  write: false,
  logLevel: 'warning',
};

/** @type {import('esbuild').BuildOptions} */
const DASHBOARD = {
  absWorkingDir: ROOT,
  // main.tsx imports app.css: esbuild writes it beside app.js.
  entryPoints: { app: 'src/dashboard/app/main.tsx' },
  outdir: 'dist/dashboard',
  bundle: true,
  platform: 'browser',
  format: 'esm',
  // What a phone bought in the last five years runs; Debian's Chromium of the tests is newer.
  target: ['chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  minify: true,
  // React's production build: without it the bundle carries React's development checks (3× the size).
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  sourcemap: false,
  metafile: true,
  write: false,
  logLevel: 'warning',
};

/** Each target keeps its own record (what it read and when it started), so that one can be rebuilt alone. */
export const TARGETS = {
  gateway: { options: GATEWAY, stamp: 'dist/build.json' },
  dashboard: { options: DASHBOARD, stamp: 'dist/dashboard/build.json' },
};

/** True when the target's outputs are missing, or a file its last build read (or the configuration) changed since it started. */
export function isStale(name) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(ROOT, TARGETS[name].stamp), 'utf8'));
  } catch {
    return true;
  }
  for (const file of [...stamp.outputs, ...stamp.inputs, ...CONFIG_INPUTS]) {
    let mtimeMs;
    try {
      mtimeMs = fs.statSync(path.join(ROOT, file)).mtimeMs;
    } catch {
      return true; // an input moved or an output was removed
    }
    if (mtimeMs > stamp.startedAt && !stamp.outputs.includes(file)) return true;
  }
  return false;
}

/** Writes a file beside its final name and renames it over: a reader sees the old file or the new one, never half of one. */
function writeAtomically(file, contents) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, contents);
  fs.renameSync(tmp, file);
}

/** Builds one target: a gateway starting meanwhile reads the old bundle or the new one. */
export async function build(name) {
  const startedAt = Date.now();
  const esbuild = await import('esbuild');
  const { options, stamp: stampFile } = TARGETS[name];
  const result = await esbuild.build(options);
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
  const stamp = {
    startedAt,
    outputs: result.outputFiles.map((f) => path.relative(ROOT, f.path)).sort(),
    inputs: Object.keys(result.metafile.inputs).sort(),
  };
  writeAtomically(path.join(ROOT, stampFile), `${JSON.stringify(stamp, null, 1)}\n`);
  const entries = stamp.outputs.filter((f) => /\.(js|css)$/.test(f)).join(', ');
  process.stderr.write(`build: ${entries} from ${stamp.inputs.length} files in ${Date.now() - startedAt} ms\n`);
}

/** Builds the named targets that are stale (or all of them with ifStale false), in parallel; returns the names built. */
export async function buildTargets(names = Object.keys(TARGETS), { ifStale = false } = {}) {
  const built = names.filter((name) => !ifStale || isStale(name));
  await Promise.all(built.map((name) => build(name)));
  return built;
}

// Run as a script (node build.mjs ...), not when imported (the dashboard tests import buildTargets).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  if (only && !TARGETS[only]) {
    process.stderr.write(`build: unknown target ${only} (targets: ${Object.keys(TARGETS).join(', ')})\n`);
    process.exit(2);
  }
  await buildTargets(only ? [only] : undefined, { ifStale: process.argv.includes('--if-stale') });
}
