import { readConfig } from './configStore';
import { UsageError } from './errors';
import { parseHttpUrl } from './httpUrl';

export const DEFAULT_BASE_URL = 'http://localhost:3000';

/** The flags every command that talks to the gateway takes. */
export interface ConnectionFlags {
  apiKey?: string;
  baseUrl?: string;
}

export interface Connection {
  baseUrl: string;
  apiKey: string;
}

/** `http://host:port` without a trailing slash or /v1; a usage error for anything but an http(s) URL. */
export function normalizeBaseUrl(raw: string): string {
  const url = parseHttpUrl(raw, '--base-url');
  return url.href.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** Flag, else env PGW_BASE_URL, else the base URL of the last `pgw login`, else http://localhost:3000. */
export function resolveBaseUrl(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): string {
  const raw = flags.baseUrl ?? nonEmpty(env.PGW_BASE_URL) ?? readConfig(env).default_base_url ?? DEFAULT_BASE_URL;
  return normalizeBaseUrl(raw);
}

/**
 * Key and server (contract decisions): flags, else env PGW_API_KEY / PGW_BASE_URL, else what `pgw login`
 * saved. A saved key is used only for the server it was saved for, so that pointing pgw at another
 * server never sends it a key of this one.
 */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Connection {
  const baseUrl = resolveBaseUrl(flags, env);
  const apiKey = flags.apiKey ?? nonEmpty(env.PGW_API_KEY) ?? readConfig(env).logins?.[baseUrl]?.api_key;
  if (!apiKey) throw new UsageError(`no API key for ${baseUrl}: run \`pgw login\`, pass --api-key or set PGW_API_KEY`);
  return { baseUrl, apiKey };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
