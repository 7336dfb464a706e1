import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { configDir, readJson, writePrivateJson } from '../configStore';

const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * Where `listen` keeps its state in the config dir: the signing secret per gateway and account, and the
 * ledger (last event forwarded) per gateway, account and --forward-to URL.
 */
export function listenFiles(baseUrl: string, accountId: string, forwardTo: string, env: NodeJS.ProcessEnv = process.env) {
  const dir = configDir(env);
  const account = `${short(baseUrl)}-${accountId}`;
  return {
    secret: path.join(dir, `listen-secret-${account}.json`),
    ledger: path.join(dir, `listen-ledger-${account}-${short(forwardTo)}.json`),
  };
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
