import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './vitest.config.ts';

/**
 * The query-plan test (`npm run test:plans`): seeds a gateway, records every query shape it sends and
 * explains each (test/plans). Its own command because it seeds thousands of payments; CI runs it after
 * `npm test`, merging the shapes the integration suites recorded (PGW_QUERY_SHAPES_MERGE).
 */
export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    include: ['test/plans/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
