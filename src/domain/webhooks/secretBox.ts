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

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
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
