import { renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const CLI_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REPO_ROOT = path.resolve(CLI_ROOT, '../..');

/**
 * pgw bundled by esbuild into one file, for the tests that run it dozens of times. `bin/pgw.mjs` runs the
 * TypeScript through tsx (no build step for a reader), which costs each run about twice the CPU of one
 * bundled file (`time pgw --help`: 0.8 s against 0.4 s, user and system). The bin itself is what
 * readme.test.ts runs, through `npx pgw` as the README says. npm packages stay in node_modules
 * (resolved from the repository, as the bin resolves them); @pgw/client is bundled from its source, as
 * tsconfig.json's paths give it to tsx.
 *
 * Built once per test worker, always from the current source (so it is never stale), into a file of its
 * own that is then renamed into place: two workers building at once each leave a whole file.
 */
let built: string | undefined;

export function pgwBundle(): string {
  if (built) return built;
  const dir = path.join(REPO_ROOT, 'node_modules/.cache/pgw-test');
  const file = path.join(dir, 'pgw.mjs');
  const partial = `${file}.${process.pid}`;
  buildSync({
    absWorkingDir: REPO_ROOT,
    entryPoints: [path.join(CLI_ROOT, 'src/main.ts')],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    alias: {
      '@pgw/client/webhooks': path.join(REPO_ROOT, 'packages/client/src/webhooks/index.ts'),
      '@pgw/client': path.join(REPO_ROOT, 'packages/client/src/index.ts'),
    },
    logLevel: 'error',
  });
  renameSync(partial, file);
  built = file;
  return file;
}
