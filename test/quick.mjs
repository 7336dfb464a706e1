#!/usr/bin/env node
/**
 * `npm run test:quick`: the inner loop while working (docs/testing.md, "Which command when"). Runs the
 * unit tests, the test files changed since the last commit (staged, unstaged and untracked), and the
 * tests that import a changed source file, through vitest's own module graph (`vitest related`). With
 * no change, the unit tests alone. Extra arguments go to vitest (`npm run test:quick -- --bail 1`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);

const changed = [...new Set([...git('diff', '--name-only', 'HEAD'), ...git('ls-files', '--others', '--exclude-standard')])]
  .filter((file) => /\.(ts|tsx|mjs|graphql|yaml)$/.test(file) && fs.existsSync(path.join(root, file)))
  // The fault and plan suites have their own commands; bench/ is not tested code.
  .filter((file) => !/^test\/(faults|plans)\/|^bench\//.test(file));

const units = fs
  .readdirSync(path.join(root, 'test/unit'), { recursive: true })
  .filter((file) => String(file).endsWith('.test.ts'))
  .map((file) => path.join('test/unit', String(file)));

process.stdout.write(`test:quick: ${units.length} unit test files, and what ${changed.length} changed file(s) reach${changed.length ? `: ${changed.join(', ')}` : ''}\n`);
const vitest = path.join(root, 'node_modules/.bin/vitest');
const result = spawnSync(vitest, ['related', '--run', ...units, ...changed, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
