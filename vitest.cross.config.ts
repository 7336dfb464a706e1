import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './vitest.config.ts';

/**
 * The cross-section (`npm run test:cross`): what CI runs on the runtimes other than the machine's
 * default, Node 24 and Node 22, where `npm test` runs everything once. Each file is here for a part of
 * the runtime that differs between Node lines; the reasons are in docs/testing.md ("Node 24 and 22").
 */
export const CROSS_SECTION = [
  // Start: npm start's bundle as esbuild builds it, its node flags, the ready line, SIGTERM through npm.
  'test/system/compiledStart.test.ts',
  'test/system/npmStartSignals.test.ts',
  // The embedded engine: its worker thread and V8 flags, the wire protocol over node:net.
  'packages/embedded-mongo/test/engine.test.ts',
  'packages/embedded-mongo/test/threaded.test.ts',
  // Streams: SSE over node:http, their lifecycle and shutdown.
  'test/streams/sseLifecycle.test.ts',
  // WebSocket and GraphQL: graphql-ws on Node's WebSocket client and the ws server, Apollo.
  'test/graphql/subscriptions.test.ts',
  'test/graphql/api.test.ts',
  // Crypto and webhooks: HMAC signatures sent and verified, secrets encrypted at rest (AES-256-GCM).
  'test/webhooks/webhooks.test.ts',
  'test/webhooks/secretsAtRest.test.ts',
  'packages/client/test/webhooks.test.ts',
  // A browser smoke test: Chromium against the gateway, graphql-ws and EventSource live.
  'test/clientTokens/browser.test.ts',
  // The docs' commands, as the README and the guides give them.
  'test/examples/docsCommands.test.ts',
];

export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    include: CROSS_SECTION,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
  },
});
