/**
 * Configuration from the environment, validated once at start. A bad value stops the process with a
 * message naming the variable, rather than surfacing later as odd behaviour.
 */
export interface Config {
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
  rateLimitPerMinute: number;
  accountCreationPerMinute: number;
  publicRateLimitPerMinute: number;
  maintenanceMode: boolean;
  webhookAllowPrivateNetworks: boolean;
  /** How often the durable timer service polls for due timers, in ms. */
  timerPollMs: number;
  /** How long finished (done or cancelled) timers are kept before they are deleted, in hours. */
  timerRetentionHours: number;
  shutdownGraceMs: number;
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

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const mongodbUri = env.MONGODB_URI?.trim() || undefined;
  if (mongodbUri && !/^mongodb(\+srv)?:\/\//.test(mongodbUri)) {
    throw new ConfigError(`MONGODB_URI must start with mongodb:// or mongodb+srv://, got '${mongodbUri.slice(0, 20)}…'`);
  }
  return {
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', `http://localhost:${port}`),
    publicBaseUrlFromEnv: Boolean(env.PUBLIC_BASE_URL?.trim()),
    mongodbUri,
    dataDir: env.DATA_DIR === undefined ? undefined : env.DATA_DIR.trim() || undefined,
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 120, 1, 100_000_000),
    accountCreationPerMinute: int(env, 'ACCOUNT_CREATION_PER_MINUTE', 30, 1, 100_000_000),
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 120, 1, 100_000_000),
    maintenanceMode: bool(env, 'MAINTENANCE_MODE', false),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    timerPollMs: int(env, 'TIMER_POLL_MS', 100, 10, 60_000),
    timerRetentionHours: int(env, 'TIMER_RETENTION_HOURS', 24, 1, 24 * 365),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
  };
}
