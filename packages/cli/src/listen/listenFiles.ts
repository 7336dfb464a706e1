import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { ACCOUNT_ID } from '../api';
import { configDir, readJson, writePrivateJson } from '../configStore';

const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * Where `listen` keeps its state in the config dir: the signing secret per gateway and account, the
 * ledger (last event forwarded) per gateway, account and --forward-to URL, and the socket `pgw resend`
 * reaches it on while it runs.
 */
export function listenFiles(baseUrl: string, accountId: string, forwardTo: string, env: NodeJS.ProcessEnv = process.env) {
  // The id goes into file names: only an account id or pgw's own key hash, never a path (api.ts checks
  // what the server answers; this is the last line before the filesystem).
  if (!ACCOUNT_ID.test(accountId) && !/^key_[0-9a-f]{16}$/.test(accountId)) throw new Error(`not an account id: '${accountId.slice(0, 64)}'`);
  const dir = configDir(env);
  const account = `${short(baseUrl)}-${accountId}`;
  return {
    secret: path.join(dir, `listen-secret-${account}.json`),
    ledger: path.join(dir, `listen-ledger-${account}-${short(forwardTo)}.json`),
    // Short, for the Unix socket path limit: hashes of the gateway and account, then of the URL.
    socket: path.join(dir, `${listenerSocketPrefix(baseUrl, accountId)}${short(forwardTo)}.sock`),
  };
}

/** Where `pgw resend` looks for the running listeners of one gateway and account (listen/control.ts). */
export function listenerSocketPrefix(baseUrl: string, accountId: string): string {
  return `listen-${short(`${baseUrl}\n${accountId}`)}-`;
}

/**
 * The local signing secret: made once per gateway and account and then reused, so that a receiver
 * configured with it keeps verifying across restarts of `listen` (as with a real endpoint's secret).
 */
export function loadOrCreateSecret(file: string): string {
  const saved = readJson<{ secret?: unknown }>(file);
  if (typeof saved?.secret === 'string' && saved.secret.startsWith('whsec_')) return saved.secret;
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  writePrivateJson(file, { secret, created_at: new Date().toISOString() });
  return secret;
}
