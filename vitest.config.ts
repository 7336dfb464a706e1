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

// Integration tests start real servers and real databases; give them room on a shared 2-core machine.
export default defineConfig({
  resolve: { alias: workspaceAliases },
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
