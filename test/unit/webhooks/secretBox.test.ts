import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, decodeSecretsKey, loadConfig } from '../../../src/config';
import { openSecret, SecretKeyError, sealSecret } from '../../../src/domain/webhooks/secretBox';

const key = randomBytes(32);
const secret = 'whsec_0123456789abcdefghijABCDEFGHIJKL';

describe('webhook secrets sealed at rest (AES-256-GCM)', () => {
  it('seals into the versioned form, without the secret, and opens again', () => {
    const sealed = sealSecret(key, 'whe_1', secret);
    expect(sealed).toMatch(/^enc:v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('whsec_');
    expect(sealSecret(key, 'whe_1', secret)).not.toBe(sealed); // a fresh IV each time
    expect(openSecret(key, 'whe_1', sealed)).toBe(secret);
  });

  it('does not open with another key, on another endpoint, or tampered; never a wrong secret', () => {
    const sealed = sealSecret(key, 'whe_1', secret);
    expect(() => openSecret(randomBytes(32), 'whe_1', sealed)).toThrow(SecretKeyError);
    expect(() => openSecret(key, 'whe_2', sealed)).toThrow(SecretKeyError);
    const [, , iv, tag, ct] = sealed.split(':');
    const flipped = Buffer.from(ct!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => openSecret(key, 'whe_1', `enc:v1:${iv}:${tag}:${flipped.toString('base64url')}`)).toThrow(SecretKeyError);
    expect(() => openSecret(key, 'whe_1', 'enc:v9:a:b:c')).toThrow(SecretKeyError);
  });

  it('opens a secret stored before encryption as it is', () => {
    expect(openSecret(key, 'whe_1', secret)).toBe(secret);
  });
});

describe('WEBHOOK_SECRETS_KEY', () => {
  it('takes 32 bytes as base64, base64url or hex', () => {
    expect(decodeSecretsKey(key.toString('base64'))).toEqual(key);
    expect(decodeSecretsKey(key.toString('base64url'))).toEqual(key);
    expect(decodeSecretsKey(key.toString('hex'))).toEqual(key);
    expect(loadConfig({ WEBHOOK_SECRETS_KEY: key.toString('base64') }).webhookSecretsKey).toEqual(key);
  });

  it('refuses another length or form, naming the variable', () => {
    for (const bad of [randomBytes(16).toString('base64'), 'not a key', randomBytes(31).toString('hex')]) {
      expect(() => loadConfig({ WEBHOOK_SECRETS_KEY: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ WEBHOOK_SECRETS_KEY: bad }), bad).toThrow(/WEBHOOK_SECRETS_KEY/);
    }
  });

  it('is required with MONGODB_URI, and the refusal says how to make one', () => {
    expect(() => loadConfig({ MONGODB_URI: 'mongodb://db.internal:27017/gw' })).toThrow(ConfigError);
    expect(() => loadConfig({ MONGODB_URI: 'mongodb://db.internal:27017/gw' })).toThrow(/WEBHOOK_SECRETS_KEY.*openssl rand -base64 32/);
    expect(loadConfig({ MONGODB_URI: 'mongodb://db.internal:27017/gw', WEBHOOK_SECRETS_KEY: key.toString('hex') }).webhookSecretsKey).toEqual(key);
  });
});
