// The Config a gateway serves with is a new one once its port is known (PORT=0): the one it was
// started with stays as loaded (frozen), and what the gateway builds links from names the served port.
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { startGateway, type Gateway } from '../../src/server';
import { createAccount } from '../support/accounts';
import { TEST_WEBHOOK_SECRETS_KEY } from '../support/processes';

let gateway: Gateway | undefined;
afterAll(async () => gateway?.close());

it('serves with a new Config naming its port; the one it was started with is left as loaded', async () => {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', MONGODB_URI: process.env.MONGODB_URI ?? '', WEBHOOK_SECRETS_KEY: TEST_WEBHOOK_SECRETS_KEY });
  gateway = await startGateway(config);
  expect(config.publicBaseUrl).toBe('http://localhost:0');
  expect(Object.isFrozen(gateway.config)).toBe(true);
  expect(gateway.config.publicBaseUrl).toBe(`http://localhost:${gateway.port}`);
  const { api } = await createAccount(gateway.url);
  const link = await api.post('/payment_links', { amount: 5000 });
  expect(link.status).toBe(201);
  expect(new URL(link.body.url).origin).toBe(`http://localhost:${gateway.port}`);
});
