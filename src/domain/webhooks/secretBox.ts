import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest: HMAC needs them, so they cannot be hashed like API keys. Sealed with
 * AES-256-GCM under a key that never goes to the database (secretsKey.ts), the endpoint's id as associated
 * data, so a sealed secret copied onto another endpoint does not open. The stored form and older plaintext
 * secrets: docs/decisions/notes/webhooks.md, "Secrets at rest".
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
