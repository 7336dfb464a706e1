#!/usr/bin/env node
/**
 * `npm run test:quick`: the inner loop while working (docs/testing.md, "Which command when"). Runs the
 * unit tests, the test files changed since the last commit (staged, unstaged and untracked), and the
 * test files that import a changed source file themselves. Not the files that reach it through other
 * modules (`vitest related` does that): most of the gateway imports most of it, and a change to one
 * module would run most of the suite. `npm test` runs everything before a push. Extra arguments go to
 * vitest (`npm run test:quick -- --bail 1`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
const listTests = (dir) =>
  fs.existsSync(path.join(root, dir))
    ? fs.readdirSync(path.join(root, dir), { recursive: true }).map(String).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f))
    : [];

const changed = [...new Set([...git('diff', '--name-only', 'HEAD'), ...git('ls-files', '--others', '--exclude-standard')])].filter((file) =>
  fs.existsSync(path.join(root, file)),
);
// What npm test runs (vitest.config.ts): test/ and the packages' tests, not the fault and plan suites.
const suite = [...listTests('test'), ...fs.readdirSync(path.join(root, 'packages')).flatMap((p) => listTests(`packages/${p}/test`))].filter(
  (file) => !/^test\/(faults|plans)\//.test(file),
);
const units = suite.filter((file) => file.startsWith('test/unit/'));
const changedTests = suite.filter((file) => changed.includes(file));

// A changed module, without its extension: an import names it as './x', './x.js' or './x.ts'.
const withoutExtension = (file) => file.replace(/\.(ts|tsx|mts|mjs|js)$/, '');
const changedModules = new Set(changed.filter((file) => /\.(ts|tsx|mts|mjs)$/.test(file) && !file.endsWith('.test.ts')).map(withoutExtension));
const importers = suite.filter((test) => {
  const text = fs.readFileSync(path.join(root, test), 'utf8');
  for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
    if (changedModules.has(withoutExtension(path.join(path.dirname(test), specifier)))) return true;
  }
  return false;
});

const files = [...new Set([...units, ...changedTests, ...importers])];
process.stdout.write(
  `test:quick: ${units.length} unit test files, ${changedTests.length} changed test files, ${importers.length} that import one of ${changedModules.size} changed modules\n`,
);
const vitest = path.join(root, 'node_modules/.bin/vitest');
const result = spawnSync(vitest, ['run', ...files, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
