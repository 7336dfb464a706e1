import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './vitest.config.ts';

/**
 * The fault and fuzz suite (`npm run test:faults`): crashes under load, two processes on one database,
 * a contract-driven fuzzer and cross-account isolation. Its files end in `.fault.ts` so that the
 * regular `npm test` does not run them; each file starts its own servers and child processes.
 */
export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    include: ['test/faults/**/*.fault.ts'],
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
