/* global module */
/**
 * The floors of the gateway and what each may import (docs/architecture.md), checked by
 * dependency-cruiser: `npm run lint:deps` (CI runs it after `npm run lint`). A rule at severity
 * `error` fails the check; `warn` only reports. test/architecture/importRules.test.ts plants a
 * violation of each kind in a throw-away tree and shows the check fails with the rule's name.
 *
 * Floors, bottom up: the base modules (src/config.ts, logger, errors, ids, paths, processId), src/metrics, src/tracing, src/db,
 * src/platform, src/domain, src/operations, src/http (what the HTTP protocols share), the protocols
 * (src/rest, src/graphql, src/realtime, src/pages, src/dashboard), then src/server.ts and src/main.ts. The packages (packages/*) stand alone.
 */

/** The floors above the domain: the domain is called by them, never the other way round. */
const ABOVE_DOMAIN = '^src/(operations|http|rest|graphql|pages|server\\.ts|main\\.ts)';

/** `src/<from>` imports nothing from `src/<to>` (two protocols over the same operations layer). */
function protocolsApart(from, to, severity) {
  return {
    name: `${from}-imports-no-${to}`,
    severity,
    comment: `REST and GraphQL are both shells over src/operations: src/${from} imports nothing from src/${to}.`,
    from: { path: `^src/${from}/` },
    to: { path: `^src/${to}/` },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle: neither module can be read, tested or moved without the other. Break it by ' +
        'moving the shared part down a floor, or by passing a function in at start (src/server.ts wires).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'platform-imports-no-domain',
      severity: 'error',
      comment:
        'src/platform (timers, lifecycle) is generic: it imports nothing from the domain or the floors above ' +
        'it. What it needs from the domain (e.g. the account-clock lookup) is passed in at start.',
      from: { path: '^src/platform/' },
      to: { path: [ABOVE_DOMAIN, '^src/(domain|realtime|dashboard)/'] },
    },
    {
      name: 'base-imports-nothing-above',
      severity: 'error',
      comment:
        'The base modules (config, logger, errors, ids, paths, processId) are imported by every floor: they ' +
        'import none of them.',
      from: { path: '^src/(config|logger|errors|ids|paths|processId)\\.ts$' },
      to: { path: '^src/([^/]+/|(server|main|index)\\.ts$)' },
    },
    {
      name: 'metrics-imports-nothing-above',
      severity: 'error',
      comment:
        'src/metrics (the Prometheus registry and its counters) sits just above the base so that every floor ' +
        'that observes (db, platform, domain, operations, the protocols) can import it: it imports none of ' +
        'them. What a gauge reads at scrape time (a count, a ping) is handed in by src/server.ts.',
      from: { path: '^src/metrics/' },
      to: { path: '^src/([^/]+/|(server|main|index)\\.ts$)', pathNot: '^src/metrics/' },
    },
    {
      name: 'tracing-imports-nothing-above',
      severity: 'error',
      comment:
        'src/tracing (the OpenTelemetry SDK, started only when OTEL_* ask for it) sits just above the base so ' +
        'that every floor that opens a span (db commands, timers, webhook attempts, operations, requests) can ' +
        'import it: it imports none of them, only the logger (to add trace ids to its lines).',
      from: { path: '^src/tracing/' },
      to: { path: '^src/([^/]+/|(server|main|index)\\.ts$)', pathNot: '^src/tracing/' },
    },
    {
      name: 'db-imports-no-gateway',
      severity: 'error',
      comment: 'src/db (connection, batching) sits under everything that stores data: it imports none of it.',
      from: { path: '^src/db/' },
      to: { path: [ABOVE_DOMAIN, '^src/(platform|domain|realtime|dashboard)/'] },
    },
    {
      name: 'domain-imports-no-protocol',
      severity: 'error',
      comment:
        'The domain is called by the operations layer and the protocols, never the other way round: it ' +
        'imports nothing from src/operations, src/rest, src/graphql, src/realtime, src/pages, src/dashboard ' +
        'or the server. What it must tell them (an event, a revoked key) goes through a hook they register.',
      from: { path: '^src/domain/' },
      to: { path: [ABOVE_DOMAIN, '^src/(realtime|dashboard)/'] },
    },
    {
      name: 'operations-imports-no-http',
      severity: 'error',
      comment:
        'src/operations runs an operation for any transport (REST, GraphQL over HTTP and WebSocket, SSE): it ' +
        'knows no Express request or response. What HTTP needs (headers, bodies, the write gate) lives in ' +
        'src/http, which the HTTP protocols import.',
      from: { path: '^src/operations/' },
      to: { path: ['^src/(http|rest|graphql|realtime|pages|dashboard)/', '^express$', 'node_modules/(express|@types/express)/'] },
    },
    // GraphQL and REST are both shells over src/operations: neither imports the other.
    protocolsApart('graphql', 'rest', 'error'),
    protocolsApart('rest', 'graphql', 'error'),
    {
      name: 'no-protocol-imports-dashboard',
      severity: 'error',
      comment:
        'The dashboard is a client of the API like any other (its app, its sign-in routes): REST, GraphQL, ' +
        'operations and what they share import nothing from it. A session is a credential of the domain ' +
        '(src/domain/sessions) admitted like a key, its cookie src/http/sessionCookie.ts, the pages\' ' +
        'policy src/http/contentSecurityPolicy.ts; src/server.ts mounts the dashboard\'s routers.',
      from: { path: '^src/(operations|http|rest|graphql|realtime|pages)/' },
      to: { path: '^src/dashboard/' },
    },
    {
      name: 'engine-imports-no-gateway',
      severity: 'error',
      comment:
        'packages/embedded-mongo is an engine of its own (npm workspace package @pgw/embedded-mongo): it ' +
        'imports nothing from the gateway.',
      from: { path: '^packages/embedded-mongo/' },
      to: { path: '^(src|generated)/' },
    },
    {
      name: 'packages-by-name-only',
      severity: 'error',
      comment:
        'The gateway imports a workspace package by its name (@pgw/embedded-mongo, @pgw/client), never by ' +
        'a relative path into packages/, so the package keeps its own exports.',
      from: { path: '^src/' },
      // By name, a workspace package resolves as 'aliased-workspace' (or, for @pgw/client, whose exports
      // point at dist/, through tsconfig.json's paths to its source: 'aliased-tsconfig-paths'); by a
      // relative path, only as 'local'.
      to: { path: '^packages/', dependencyTypesNot: ['aliased-workspace', 'aliased-tsconfig-paths'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A package's build output (npm pack of @pgw/client) is not source.
    exclude: { path: '^packages/[^/]+/dist/' },
    // Type-only imports count: a circle of types is still a circle for the reader.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
