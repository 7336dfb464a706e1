import { createHash } from 'node:crypto';

/**
 * Configuration from the environment, validated once at start. A bad value stops the process with a
 * message naming the variable, rather than surfacing later as odd behaviour. Read-only once loaded
 * (frozen, and typed so): a value known only later (the served port's public URL) makes a new Config.
 */
export type Config = Readonly<ConfigValues>;

interface ConfigValues {
  port: number;
  host: string;
  publicBaseUrl: string;
  /** False when PUBLIC_BASE_URL was derived from PORT (then the served port decides it). */
  publicBaseUrlFromEnv: boolean;
  /** Real MongoDB when set; otherwise the embedded engine is started in-process. */
  mongodbUri: string | undefined;
  /** Data directory of the embedded engine; undefined = memory only. */
  dataDir: string | undefined;
  maxBodyBytes: number;
  /** GraphQL execution deadline and answer size cap (docs/graphql.md, "Limits"). */
  graphqlDeadlineMs: number;
  graphqlMaxResponseBytes: number;
  rateLimitPerMinute: number;
  /** Requests per minute of all of an account's keys together (docs/api.md, "Rate limiting"). */
  rateLimitPerAccountPerMinute: number;
  /** Requests per minute of one dashboard session (DASHBOARD_RATE_LIMIT_PER_MINUTE), apart from its key's. */
  dashboardRateLimitPerMinute: number;
  accountCreationPerMinute: number;
  publicRateLimitPerMinute: number;
  maintenanceMode: boolean;
  /** Origins allowed to call client-token routes from a browser (CORS_ORIGINS); null = any origin. */
  corsOrigins: string[] | null;
  webhookAllowPrivateNetworks: boolean;
  /** WEBHOOK_SECRETS_KEY: encrypts stored webhook secrets (docs/webhooks.md); unset = generated (embedded engine). */
  webhookSecretsKey: Buffer | undefined;
  /** How often the durable timer service polls for due timers, in ms. */
  timerPollMs: number;
  /**
   * BACKGROUND_THREAD: timers and their webhooks run in a thread of their own (src/background/thread.ts).
   * Off by default: on the 2-core machine the rail at 300/s was later with it (a third busy thread
   * beside the HTTP thread and the engine's; docs/operations.md, "The background thread").
   */
  backgroundThread: boolean;
  /** How long finished (done or cancelled) timers are kept before they are deleted, in hours. */
  timerRetentionHours: number;
  /** Retention of request logs, refused-request counts and ended rate-limit windows (RETENTION). */
  requestLogRetentionDays: number;
  refusedCountRetentionDays: number;
  rateLimitCounterRetentionSeconds: number;
  shutdownGraceMs: number;
  /**
   * WRITE_CONCURRENCY: API writes (non-GET /v1 requests, GraphQL over HTTP) handled at once per process
   * while its event loop is saturated; more wait in arrival order (src/http/writeGate.ts).
   */
  writeConcurrency: number;
  /** Deadlines and caps of plain HTTP connections (src/http/httpServer.ts). */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnections: number; maxConnectionsPerIp: number };
  /** Caps on long-lived connections, per gateway process (docs/api.md, "Rate limiting"). */
  connections: ConnectionLimits;
  /** Caps on webhook requests and recoveries (docs/webhooks.md, "Outgoing traffic caps"). */
  webhookOutgoing: WebhookOutgoingLimits;
  /** METRICS_ENABLED (default true): GET /metrics is served; false = 404. */
  metricsEnabled: boolean;
  /**
   * SHA-256 of METRICS_TOKEN when set: GET /metrics then needs `Authorization: Bearer <token>`. Only
   * the hash is kept (compared in constant time, src/rest/metricsRoutes.ts), so no copy of the token
   * travels with the Config (to the background thread, into a log line).
   */
  metricsTokenHash: Buffer | undefined;
}

export interface ConnectionLimits {
  wsPerKey: number;
  wsPerIp: number;
  subscriptionsPerConnection: number;
  subscriptionsPerKey: number;
  wsLifetimeMs: number;
  ssePerIp: number;
  ssePerKey: number;
  sseLifetimeMs: number;
  /**
   * SSE_KEEPALIVE_MS: how often an open SSE stream gets a `: keep-alive` comment (src/realtime/keepAlive.ts),
   * so that proxies and clients that drop idle connections keep it.
   */
  sseKeepAliveMs: number;
  /** How often open connections' keys (and client tokens' streams: revoked or expired) are checked. */
  revocationCheckMs: number;
}

export interface WebhookOutgoingLimits {
  /** Webhook requests (genuine, retries, recoveries, chaos copies) of one account in any 60 s, per gateway process. */
  perAccountPerMinute: number;
  /** The same for one target host, whichever accounts cause them. */
  perHostPerMinute: number;
  /** How long after a recovery of an endpoint ends before another may start. */
  recoverCooldownMs: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got '${raw}'`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be 'true' or 'false', got '${raw}'`);
}

function url(env: Env, name: string, def: string): string {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? def : raw.trim();
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got '${value}'`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL, got '${value}'`);
  }
  return value.replace(/\/+$/, '');
}

/** A comma-separated list of origins (`https://shop.example`, no path); unset or empty = null. */
function origins(env: Env, name: string): string[] | null {
  const list = (env[name] ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  if (list.length === 0) return null;
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin.replace(/\/$/, '')) {
      throw new ConfigError(`${name} must be a comma-separated list of origins such as https://shop.example, got '${origin}'`);
    }
  }
  return list.map((o) => o.replace(/\/$/, ''));
}

/**
 * WEBHOOK_SECRETS_KEY's format (the key that seals webhook secrets at rest, src/domain/webhooks/secretBox.ts).
 * Here, not in the domain, because reading the environment checks it; the domain reads it from here.
 */
const SECRETS_KEY_BYTES = 32;

/** 32 bytes from base64 (or base64url) or hex text; null when the text is neither. */
export function decodeSecretsKey(raw: string): Buffer | null {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === SECRETS_KEY_BYTES ? bytes : null;
}

/** Why a gateway on MONGODB_URI will not start without WEBHOOK_SECRETS_KEY, and how to make one. */
export function missingKeyMessage(): string {
  return 'WEBHOOK_SECRETS_KEY must be set with MONGODB_URI: it encrypts the webhook signing secrets stored in the database, and every gateway on that database needs the same one. Make one with `openssl rand -base64 32` and keep it safe (the stored secrets cannot be used without it)';
}

/** 32 bytes, base64 or hex. Required with MONGODB_URI: gateways sharing a database must share it. */
function secretsKey(env: Env, name: string, mongodbUri: string | undefined): Buffer | undefined {
  const raw = env[name]?.trim();
  if (!raw) {
    if (mongodbUri) throw new ConfigError(missingKeyMessage());
    return undefined;
  }
  const key = decodeSecretsKey(raw);
  if (!key) throw new ConfigError(`${name} must be 32 bytes in base64 (44 characters) or hex (64), e.g. from \`openssl rand -base64 32\``);
  return key;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const rateLimitPerMinute = int(env, 'RATE_LIMIT_PER_MINUTE', 120, 1, 100_000_000);
  const mongodbUri = env.MONGODB_URI?.trim() || undefined;
  if (mongodbUri && !/^mongodb(\+srv)?:\/\//.test(mongodbUri)) {
    throw new ConfigError(`MONGODB_URI must start with mongodb:// or mongodb+srv://, got '${mongodbUri.slice(0, 20)}…'`);
  }
  return Object.freeze({
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`),
    publicBaseUrlFromEnv: Boolean(env.PUBLIC_BASE_URL?.trim()),
    mongodbUri,
    dataDir: env.DATA_DIR === undefined ? undefined : env.DATA_DIR.trim() || undefined,
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    graphqlDeadlineMs: int(env, 'GRAPHQL_DEADLINE_MS', 5_000, 0, 600_000),
    graphqlMaxResponseBytes: int(env, 'GRAPHQL_MAX_RESPONSE_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
    rateLimitPerMinute,
    // Five keys' worth unless set: raising the key limit (benchmarks, load tests) raises this with it.
    rateLimitPerAccountPerMinute: int(env, 'RATE_LIMIT_PER_ACCOUNT_PER_MINUTE', Math.min(5 * rateLimitPerMinute, 100_000_000), 1, 100_000_000),
    // A dashboard page loads several queries at once and keeps live ones open: its own budget, so that a
    // person looking at the dashboard never spends the key's API requests (contract decisions).
    dashboardRateLimitPerMinute: int(env, 'DASHBOARD_RATE_LIMIT_PER_MINUTE', 600, 1, 100_000_000),
    accountCreationPerMinute: int(env, 'ACCOUNT_CREATION_PER_MINUTE', 30, 1, 100_000_000),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 120, 1, 100_000_000),
    maintenanceMode: bool(env, 'MAINTENANCE_MODE', false),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookSecretsKey: secretsKey(env, 'WEBHOOK_SECRETS_KEY', mongodbUri),
    timerPollMs: int(env, 'TIMER_POLL_MS', 100, 10, 60_000),
    backgroundThread: bool(env, 'BACKGROUND_THREAD', false),
    timerRetentionHours: int(env, 'TIMER_RETENTION_HOURS', 24, 1, 24 * 365),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    writeConcurrency: int(env, 'WRITE_CONCURRENCY', 64, 1, 1_000_000),
    http: {
      headersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 15_000, 1_000, 600_000),
      requestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000),
      // Open sockets in all (0 = no cap): what the fan-out bench serves (10,000 live streams), some 150 MiB
      // of heap at 15 KB each and up to 500 MiB of RSS (bench/README.md), within common `ulimit -n`.
      maxConnections: int(env, 'HTTP_MAX_CONNECTIONS', 10_000, 0, 10_000_000),
      // Above the SSE and WebSocket caps per IP together (100 + 50), with room for plain requests.
      maxConnectionsPerIp: int(env, 'HTTP_MAX_CONNECTIONS_PER_IP', 256, 0, 1_000_000),
    },
    connections: {
      wsPerKey: int(env, 'WS_MAX_CONNECTIONS_PER_KEY', 20, 1, 1_000_000),
      wsPerIp: int(env, 'WS_MAX_CONNECTIONS_PER_IP', 50, 1, 1_000_000),
      subscriptionsPerConnection: int(env, 'WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', 50, 1, 1_000_000),
      subscriptionsPerKey: int(env, 'WS_MAX_SUBSCRIPTIONS_PER_KEY', 200, 1, 1_000_000),
      wsLifetimeMs: int(env, 'WS_MAX_LIFETIME_SECONDS', 3_600, 1, 7 * 86_400) * 1_000,
      ssePerIp: int(env, 'SSE_MAX_STREAMS_PER_IP', 100, 1, 1_000_000),
      ssePerKey: int(env, 'SSE_MAX_STREAMS_PER_KEY', 100, 1, 1_000_000),
      sseLifetimeMs: int(env, 'SSE_MAX_LIFETIME_SECONDS', 3_600, 1, 7 * 86_400) * 1_000,
      sseKeepAliveMs: int(env, 'SSE_KEEPALIVE_MS', 15_000, 100, 600_000),
      revocationCheckMs: int(env, 'KEY_REVOCATION_CHECK_MS', 500, 50, 60_000),
    },
    webhookOutgoing: {
      perAccountPerMinute: int(env, 'WEBHOOK_MAX_REQUESTS_PER_ACCOUNT_PER_MINUTE', 6_000, 6, 100_000_000),
      perHostPerMinute: int(env, 'WEBHOOK_MAX_REQUESTS_PER_HOST_PER_MINUTE', 12_000, 6, 100_000_000),
      recoverCooldownMs: int(env, 'WEBHOOK_RECOVER_COOLDOWN_SECONDS', 60, 1, 86_400) * 1_000,
    },
    metricsEnabled: bool(env, 'METRICS_ENABLED', true),
    metricsTokenHash: metricsToken(env, 'METRICS_TOKEN'),
    ...retentionFrom(env),
  });
}

/** A bearer token: printable ASCII without spaces, 16 to 256 characters; stored as its SHA-256. */
function metricsToken(env: Env, name: string): Buffer | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError(`${name} must be 16 to 256 printable characters without spaces, e.g. from \`openssl rand -hex 32\``);
  return createHash('sha256').update(raw).digest();
}

/**
 * How long what grows is kept (docs/operations.md, "What is kept, and for how long"). The TTL indexes that apply
 * them are declared when their models load, before any Config exists, so the models read RETENTION
 * (from process.env, defaults on a bad value); loadConfig validates the same variables and stops on a
 * bad one, so a running gateway always has the values it was given.
 */
function retentionFrom(env: Env) {
  return {
    requestLogRetentionDays: int(env, 'REQUEST_LOG_RETENTION_DAYS', 30, 1, 3_650),
    refusedCountRetentionDays: int(env, 'REFUSED_COUNT_RETENTION_DAYS', 30, 1, 3_650),
    rateLimitCounterRetentionSeconds: int(env, 'RATE_LIMIT_COUNTER_RETENTION_SECONDS', 60, 0, 86_400),
  };
}

function retentionOrDefaults(env: Env): ReturnType<typeof retentionFrom> {
  try {
    return retentionFrom(env);
  } catch {
    return retentionFrom({});
  }
}

const retention = retentionOrDefaults(process.env);
export const RETENTION = {
  requestLogSeconds: retention.requestLogRetentionDays * 86_400,
  refusedCountSeconds: retention.refusedCountRetentionDays * 86_400,
  rateLimitCounterSeconds: retention.rateLimitCounterRetentionSeconds,
} as const;
