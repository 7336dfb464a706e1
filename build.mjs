// build.mjs — the compiled gateway: esbuild bundles into dist/ what `npm run dev` runs through tsx.
//
//   npm run build     (node build.mjs)              dist/main.js (the gateway), dist/db.js (`npm run db`'s engine)
//   npm start         (prestart: node build.mjs --if-stale)   builds only when an input changed since the last build
//
// Why a bundle: a start through tsx compiles ~400 TypeScript files, and even precompiled, Node spends most
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
const OUT_DIR = path.join(ROOT, 'dist');
/** What the last build read and when it started (esbuild's metafile inputs): the staleness check's record. */
const STAMP = path.join(OUT_DIR, 'build.json');
/** Inputs esbuild does not list: this script's options, the lockfile npm installs from, npm's own install record. */
const CONFIG_INPUTS = ['build.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'node_modules/.package-lock.json'];

/** @type {import('esbuild').BuildOptions} */
const OPTIONS = {
  absWorkingDir: ROOT,
  entryPoints: { main: 'src/main.ts', db: 'src/db/embedded/cli.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS packages inside an ESM bundle call require() for Node's built-ins (and for optional
  // packages, in try/catch): give the bundle a real one.
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

/** True when dist/ is missing, or a file the last build read (or its configuration) changed since it started. */
function isStale() {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
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

async function build() {
  const startedAt = Date.now();
  const esbuild = await import('esbuild');
  const result = await esbuild.build(OPTIONS);
  fs.mkdirSync(OUT_DIR, { recursive: true });
  // Each file is written beside its final name and renamed over it: a gateway starting meanwhile reads
  // the old bundle or the new one, never half of one.
  for (const file of result.outputFiles) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, file.contents);
    fs.renameSync(tmp, file.path);
  }
  const stamp = {
    startedAt,
    outputs: result.outputFiles.map((f) => path.relative(ROOT, f.path)).sort(),
    inputs: Object.keys(result.metafile.inputs).sort(),
  };
  fs.writeFileSync(`${STAMP}.${process.pid}.tmp`, `${JSON.stringify(stamp, null, 1)}\n`);
  fs.renameSync(`${STAMP}.${process.pid}.tmp`, STAMP);
  const entries = stamp.outputs.filter((f) => f.endsWith('.js')).join(', ');
  process.stderr.write(`build: ${entries} from ${stamp.inputs.length} files in ${Date.now() - startedAt} ms\n`);
}

if (!(process.argv.includes('--if-stale') && !isStale())) {
  await build();
}
