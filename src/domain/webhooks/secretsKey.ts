import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, decodeSecretsKey, missingKeyMessage, type Config } from '../../config';
import { logger } from '../../logger';
import { isSealed, openSecret, SecretKeyError, sealSecret } from './secretBox';
import { WebhookEndpointModel, type EndpointSecret } from './webhookEndpointModel';

/**
 * The key that seals webhook secrets (secretBox.ts), chosen when the webhook service starts:
 * WEBHOOK_SECRETS_KEY, else a key file in the embedded engine's DATA_DIR, else a random key for the life of
 * the process (its data is in memory too). It is checked against a stored secret, so that a wrong key
 * stops the start rather than failing every delivery. More:
 * docs/decisions/notes/webhooks.md, "The secrets key".
 */
export const KEY_FILE = 'webhook-secrets.key';
// The key that opens the secrets sealed in the database: every gateway on it must have the same one (the
// start checks it against a stored secret), so the gateways of a process share it.
// eslint-disable-next-line no-restricted-syntax -- the database's key, the same for every gateway on it
let key: Buffer | null = null;

export function secretsKey(): Buffer {
  if (!key) throw new SecretKeyError('webhook secrets key not loaded: the webhook service has not started');
  return key;
}

async function keyFromDataDir(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, KEY_FILE);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  try {
    const fresh = randomBytes(32);
    // 'wx': never overwrite a key that exists (the secrets sealed with it would be lost).
    await fs.writeFile(file, `${fresh.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    logger.info({ file }, 'generated the webhook secrets key (keep it with the data: the stored webhook secrets need it)');
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stored = decodeSecretsKey(await fs.readFile(file, 'utf8'));
  if (!stored) throw new ConfigError(`${file} does not hold a 32-byte key (base64 or hex); restore it from a backup of the data directory`);
  return stored;
}

export async function loadSecretsKey(config: Pick<Config, 'webhookSecretsKey' | 'mongodbUri' | 'dataDir'>): Promise<void> {
  if (config.webhookSecretsKey) key = config.webhookSecretsKey;
  else if (config.mongodbUri) throw new ConfigError(missingKeyMessage());
  else if (config.dataDir) key = await keyFromDataDir(config.dataDir);
  else key = randomBytes(32);
  await checkKey(key);
  await sealLegacySecrets();
}

/** One sealed secret must open with the key, or nothing would sign: stop now, changing nothing. */
async function checkKey(k: Buffer): Promise<void> {
  const sample = await WebhookEndpointModel.findOne({ 'secrets.value': { $gte: 'enc:', $lt: 'enc;' } }, { secrets: 1 }).lean();
  const sealed = sample?.secrets.find((s) => isSealed(s.value));
  if (!sample || !sealed) return;
  try {
    openSecret(k, sample._id, sealed.value);
  } catch (err) {
    if (!(err instanceof SecretKeyError)) throw err;
    throw new ConfigError(
      `WEBHOOK_SECRETS_KEY does not decrypt the stored webhook secrets (tried on endpoint ${sample._id}): it is not the key they were stored with. Start with that key (or, embedded, the ${KEY_FILE} in DATA_DIR); nothing was changed`,
    );
  }
}

/**
 * Seals secrets stored in plaintext (`whsec_…`, before encryption). The write is conditional on the
 * secrets being the ones read (same values, same count), so a rotation or another gateway doing the
 * same meanwhile is never overwritten: that endpoint is left for the next start.
 */
export async function sealLegacySecrets(): Promise<number> {
  const k = secretsKey();
  const legacy = await WebhookEndpointModel.find({ 'secrets.value': { $gte: 'whsec_', $lt: 'whsec`' } }, { secrets: 1 }).lean();
  let sealed = 0;
  for (const endpoint of legacy) {
    const secrets: EndpointSecret[] = endpoint.secrets.map((s) => (isSealed(s.value) ? s : { ...s, value: sealSecret(k, endpoint._id, s.value) }));
    const res = await WebhookEndpointModel.updateOne(
      { _id: endpoint._id, 'secrets.value': { $all: endpoint.secrets.map((s) => s.value) }, secrets: { $size: endpoint.secrets.length } },
      { $set: { secrets } },
    );
    sealed += res.modifiedCount;
  }
  if (sealed > 0) logger.info({ endpoints: sealed }, 'encrypted webhook secrets that were stored in plaintext');
  return sealed;
}
