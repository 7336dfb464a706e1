import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '@pgw/client';
import { sealLegacySecrets } from '../../src/domain/webhooks/secretsKey';
import { WebhookEndpointModel } from '../../src/domain/webhooks/webhookEndpointModel';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { spawnGateway } from '../support/processes';
import { useGatewayAndReceiver } from './support/gateway';
import { createEndpoint } from './support/webhooks';

/** Issue 16: webhook signing secrets are stored encrypted; receivers see no difference. */
const ctx = useGatewayAndReceiver();

/** The endpoint as stored, as text: what someone reading the database would see. */
async function storedText(id: string): Promise<string> {
  return JSON.stringify(await WebhookEndpointModel.collection.findOne({ _id: id as never }));
}

/** Sends a test ping and returns whether its signature verifies with `secret`. */
async function pingVerifies(api: ApiClient, endpointId: string, secret: string, url = ctx.receiver): Promise<boolean> {
  const ping = await api.post(`/webhook_endpoints/${endpointId}/test`, {});
  expect(ping.status, ping.text).toBe(202);
  const [req] = await url.waitFor((r) => r.headers['service-event-id'] === ping.body.event_id);
  try {
    verifyWebhookSignature(req!.rawBody, String(req!.headers['service-signature']), secret);
    return true;
  } catch {
    return false;
  }
}

describe('webhook secrets at rest', () => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await createAccount(ctx.server.baseUrl);
  });

  it('stores no whsec_ string, before or after a rotation, and deliveries still verify', async () => {
    const endpoint = await createEndpoint(account.api, `${ctx.receiver.url}/sealed`);
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(await storedText(endpoint.id)).not.toContain('whsec_');
    expect(await storedText(endpoint.id)).toContain('enc:v1:');
    expect(await pingVerifies(account.api, endpoint.id, endpoint.secret)).toBe(true);

    const rotated = await account.api.post(`/webhook_endpoints/${endpoint.id}/rotate_secret`, {});
    expect(rotated.status, rotated.text).toBe(200);
    expect(await storedText(endpoint.id)).not.toContain('whsec_');
    // Both the new and (for 24 h) the previous secret sign.
    expect(await pingVerifies(account.api, endpoint.id, rotated.body.secret)).toBe(true);
    expect(await pingVerifies(account.api, endpoint.id, endpoint.secret)).toBe(true);
  });

  it('a secret stored in plaintext before encryption still signs, and is sealed at start-up', async () => {
    const id = 'whe_legacyPlaintextSecret000';
    const secret = 'whsec_legacyLegacyLegacyLegacy0123';
    const now = new Date();
    await WebhookEndpointModel.collection.insertOne({
      _id: id as never,
      account_id: account.id,
      url: `${ctx.receiver.url}/legacy`,
      events: ['*'],
      name: null,
      description: null,
      secrets: [{ value: secret, created_at: now, expires_at: null }],
      created_at: now,
    });
    expect(await pingVerifies(account.api, id, secret)).toBe(true);
    // What the webhook service runs when it starts.
    expect(await sealLegacySecrets()).toBeGreaterThanOrEqual(1);
    expect(await storedText(id)).not.toContain('whsec_');
    expect(await pingVerifies(account.api, id, secret)).toBe(true);
  });
});

describe('the key beside the data (embedded engine, DATA_DIR)', () => {
  it('is made on the first start (0600), a wrong WEBHOOK_SECRETS_KEY stops the start, the right one still signs', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-secrets-'));
    const env = { DATA_DIR: dataDir, WEBHOOK_SECRETS_KEY: '', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    try {
      const first = await spawnGateway('', env);
      let endpoint;
      let sk;
      try {
        const account = await createAccount(first.url);
        sk = account.sk;
        endpoint = await createEndpoint(account.api, `${ctx.receiver.url}/datadir`);
      } finally {
        await first.stop();
      }
      const keyFile = path.join(dataDir, 'webhook-secrets.key');
      expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);

      const wrongKey = Buffer.alloc(32, 7).toString('base64');
      const refused = await spawnGateway('', { ...env, WEBHOOK_SECRETS_KEY: wrongKey }).then(
        async (g) => {
          await g.stop();
          return '';
        },
        (err: Error) => err.message,
      );
      expect(refused).toMatch(/WEBHOOK_SECRETS_KEY does not decrypt the stored webhook secrets/);

      // Nothing was changed by the refused start: the key file's key still opens every secret.
      const again = await spawnGateway('', env);
      try {
        expect(await pingVerifies(new ApiClient(again.url, sk), endpoint.id, endpoint.secret)).toBe(true);
      } finally {
        await again.stop();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
