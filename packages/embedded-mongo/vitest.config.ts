import { configDefaults, defineConfig } from 'vitest/config';

// `npm test -w packages/embedded-mongo`: the engine's conformance suite alone. The gateway's root
// config runs these same files as part of `npm test` (packages/*/test/**).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
