import { defineConfig } from 'vitest/config';

// Integration tests start real servers and real databases; give them room on a shared 2-core machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
