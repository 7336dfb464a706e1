import { configDefaults, defineConfig } from 'vitest/config';

// Integration tests start real servers and real databases; give them room on a shared 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // The fault suite (SIGKILLs, fuzzing) has its own command: npm run test:faults; the plan test (which
    // explains the shapes the other suites record) runs after them: npm run test:plans.
    exclude: [...configDefaults.exclude, 'test/faults/**', 'test/plans/**'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
