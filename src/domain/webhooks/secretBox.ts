import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest. They must be usable for HMAC, so they cannot be hashed like API
 * keys; they are encrypted with AES-256-GCM under a key that never goes to the database
 * (WEBHOOK_SECRETS_KEY, or the key file beside the embedded engine's data: see secretsKey.ts), with the
 * endpoint's id as associated data, so a sealed secret copied onto another endpoint does not open.
 *
 * Stored form: `enc:v1:<iv>:<tag>:<ciphertext>`, each part base64url (12-byte IV, 16-byte tag). The
 * version names the scheme, so another can follow without guessing. A value without the `enc:` prefix
 * is a secret stored before encryption (`whsec_…` as is): it still opens, and is sealed at start-up.
 */
const PREFIX = 'enc:v1:';
const KEY_BYTES = 32;

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** 32 bytes from base64 (or base64url) or hex text; null when the text is neither. */
export function decodeSecretsKey(raw: string): Buffer | null {
  const text = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === KEY_BYTES ? bytes : null;
}

/** Why a gateway on MONGODB_URI will not start without WEBHOOK_SECRETS_KEY, and how to make one. */
export function missingKeyMessage(): string {
  return 'WEBHOOK_SECRETS_KEY must be set with MONGODB_URI: it encrypts the webhook signing secrets stored in the database, and every gateway on that database needs the same one. Make one with `openssl rand -base64 32` and keep it safe (the stored secrets cannot be used without it)';
}

export function isSealed(stored: string): boolean {
  return stored.startsWith('enc:');
}

export function sealSecret(key: Buffer, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${PREFIX}${iv.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}:${ciphertext.toString('base64url')}`;
}

/** The secret; a legacy plaintext value as is. Throws SecretKeyError when the key (or the endpoint) is not the one it was sealed with. */
export function openSecret(key: Buffer, endpointId: string, stored: string): string {
  if (!isSealed(stored)) return stored;
  const parts = stored.slice(PREFIX.length).split(':');
  if (!stored.startsWith(PREFIX) || parts.length !== 3) throw new SecretKeyError(`webhook secret of ${endpointId} is in an unknown stored form`);
  const [iv, tag, ciphertext] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(endpointId, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`webhook secret of ${endpointId} does not decrypt with this WEBHOOK_SECRETS_KEY (not the key it was stored with)`);
  }
}
