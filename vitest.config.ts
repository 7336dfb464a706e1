import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const clientSource = (file: string) => fileURLToPath(new URL(`./packages/client/src/${file}`, import.meta.url));

/**
 * @pgw/client from its source, as tsconfig.json's paths say (its package.json exports point at dist/,
 * which only `npm pack` builds). Every vitest config of the repository uses these.
 */
export const workspaceAliases = [
  { find: /^@pgw\/client$/, replacement: clientSource('index.ts') },
  { find: /^@pgw\/client\/webhooks$/, replacement: clientSource('webhooks/index.ts') },
];

/**
 * Files that need a process of their own: a module mock (`vi.mock` holds for the whole module graph), or
 * what they assert is process-wide (the metrics registry counts every gateway in the process; the open
 * ports of the process; per-IP counts kept in memory). Every other file shares its worker's modules (`isolate: false`): the gateway's
 * code is imported once per worker rather than once per file (~280 s of the suite's time on 2 cores).
 * Each file still starts and stops its own gateways: the process has one mongoose connection, so a
 * gateway left running for the next file would refuse the next file's own database (docs/testing.md).
 */
export const ISOLATED = [
  'test/checkout/stalledClaim.test.ts',
  'test/metrics/**/*.test.ts',
  'test/system/databaseAccess.test.ts',
  // Maintenance answers are counted per client IP in the process's memory (rateLimitService.ts,
  // hitLocalRateLimit): another file's gateway in maintenance would have counted 127.0.0.1 already.
  'test/contract/examples.test.ts',
  'test/foundation/rateLimitHeaders.test.ts',
  'test/foundation/system.test.ts',
  // Starts a gateway through startGateway itself, not test/support/server.ts, which would first stop the
  // gateway an earlier file shared (the process has one database connection).
  'test/system/servedConfig.test.ts',
  // Connect mongoose themselves and disconnect it after: in a shared worker that would be the
  // connection of the gateway the worker shares.
  'test/graphql/subscriptionsUntilOutcome.test.ts',
  'test/foundation/requestLogBound.test.ts',
  'test/webhooks/endpointCache.test.ts',
  'test/streams/eventBusRecovery.test.ts',
  'test/streams/eventBus.test.ts',
  // Counts the entries of the process's parsed-document cache, whose byte bound earlier files of a
  // shared worker may have filled (a new entry then evicts one).
  'test/graphql/documentCache.test.ts',
];

const include = ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'];
// The fault suite (SIGKILLs, fuzzing) has its own command: npm run test:faults; the plan test (which
// explains the shapes the other suites record) runs after them: npm run test:plans.
const exclude = [...configDefaults.exclude, 'test/faults/**', 'test/plans/**'];

// Integration tests start real servers and real databases; give them room on a shared 2-core machine.
export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: Number(process.env.PGW_TEST_WORKERS) || 2,
    projects: [
      { extends: true, test: { name: 'shared', include, exclude: [...exclude, ...ISOLATED], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED, exclude } },
    ],
  },
});
