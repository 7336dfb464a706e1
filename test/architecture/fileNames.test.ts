import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../src/paths';

/**
 * One file-naming style (docs/contributing.md, "File names"): a source file is named in camelCase after
 * what it holds (`paymentService.ts`, `timerPoller.ts`), never `name.role.ts`. A dot before the
 * extension only names what runs the file: `.test`, `.browser.test` and `.fault` (vitest's suites),
 * `.d` (declarations), `.config` (tools).
 */
const RUNNER_SUFFIXES = /(\.test|\.browser\.test|\.fault|\.d|(\.[a-z]+)?\.config)\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

export function misnamed(files: readonly string[]): string[] {
  return files.filter((f) => /\.(ts|tsx|mts|cts)$/.test(f) && !f.startsWith('generated/'))
    .filter((f) => {
      const base = f.slice(f.lastIndexOf('/') + 1);
      if (RUNNER_SUFFIXES.test(base)) return base.replace(RUNNER_SUFFIXES, '').includes('.');
      return base.replace(/\.(ts|tsx|mts|cts)$/, '').includes('.');
    });
}

describe('file names', () => {
  it('finds a planted name.role.ts, and lets camelCase names and runner suffixes pass', () => {
    expect(misnamed(['src/domain/payments/payment.service.ts', 'test/unit/payment.states.test.ts'])).toEqual([
      'src/domain/payments/payment.service.ts',
      'test/unit/payment.states.test.ts',
    ]);
    expect(
      misnamed(['src/domain/payments/paymentService.ts', 'test/a/views.browser.test.ts', 'test/faults/crash.fault.ts', 'src/db/mongodbConnection.d.ts', 'vitest.config.ts']),
    ).toEqual([]);
  });

  it('holds for every TypeScript file of the repository', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
    expect(misnamed(files)).toEqual([]);
  });
});
