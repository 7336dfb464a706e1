import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The saved login for one gateway (by base URL). */
export interface SavedLogin {
  api_key: string;
  account_id: string | null;
  saved_at: string;
}

/** `config.json`: the logins by base URL, and the one used when no --base-url / PGW_BASE_URL is given. */
export interface SavedConfig {
  default_base_url?: string;
  logins?: Record<string, SavedLogin>;
}

/** `$XDG_CONFIG_HOME/pgw`, else `~/.config/pgw` (read at each call, so tests can point it elsewhere). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.config');
  return path.join(base, 'pgw');
}

export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'config.json');
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): SavedConfig {
  return readJson<SavedConfig>(configFile(env)) ?? {};
}

export function writeConfig(config: SavedConfig, env: NodeJS.ProcessEnv = process.env): void {
  writePrivateJson(configFile(env), config);
}

/** A JSON file's content, or null when it does not exist or is not JSON (a torn write is treated as absent). */
export function readJson<T>(file: string): T | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/**
 * Writes JSON that only the user may read: directories 0700, the file 0600, written to a temporary name
 * and renamed, so that a reader (or a pgw killed mid-write) never sees half a file. The modes are set
 * explicitly because mkdir/write modes are filtered by the umask and ignored for existing paths.
 */
export function writePrivateJson(file: string, value: unknown): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
