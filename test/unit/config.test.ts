import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 3000, publicBaseUrl: 'http://localhost:3000', maxBodyBytes: 65536, rateLimitPerMinute: 120, accountCreationPerMinute: 30, maintenanceMode: false, webhookAllowPrivateNetworks: false, writeConcurrency: 64 });
    expect(c.mongodbUri).toBeUndefined();
  });

  it('is read-only once loaded: a later value makes a new Config', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    // ES modules are strict: writing to a frozen object throws rather than being ignored.
    expect(() => {
      (c as { publicBaseUrl: string }).publicBaseUrl = 'http://elsewhere';
    }).toThrow(TypeError);
    expect(c.publicBaseUrl).toBe('http://localhost:3000');
  });

  it('names the variable of a bad value', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ MAINTENANCE_MODE: 'maybe' })).toThrow(/MAINTENANCE_MODE/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://x' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ MONGODB_URI: 'postgres://x' })).toThrow(/MONGODB_URI/);
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PER_MINUTE/);
    expect(() => loadConfig({ WRITE_CONCURRENCY: '0' })).toThrow(/WRITE_CONCURRENCY/);
  });

  it('METRICS_ENABLED and METRICS_TOKEN: on by default, the token kept as its SHA-256 only', () => {
    expect(loadConfig({})).toMatchObject({ metricsEnabled: true, metricsTokenHash: undefined });
    expect(loadConfig({ METRICS_ENABLED: 'false' }).metricsEnabled).toBe(false);
    const token = 'a-metrics-token-of-32-characters';
    const config = loadConfig({ METRICS_TOKEN: token });
    expect(config.metricsTokenHash).toEqual(createHash('sha256').update(token).digest());
    expect(JSON.stringify(config)).not.toContain(token);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ METRICS_TOKEN: 'has a space in the middle of it' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ METRICS_ENABLED: 'sometimes' })).toThrow(/METRICS_ENABLED/);
  });

  it('derives PUBLIC_BASE_URL from PORT and strips a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://sandbox.example.ao/' }).publicBaseUrl).toBe('https://sandbox.example.ao');
  });
});
