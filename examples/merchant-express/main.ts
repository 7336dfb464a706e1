/**
 * First run: `npx tsx examples/merchant-express/main.ts` with the gateway running (webhooks to a local
 * merchant need the gateway started with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).
 *
 *   PGW_BASE_URL        the gateway (default http://localhost:3000)
 *   PGW_API_KEY         the shop's sk_test_ key; unset: a new sandbox account is made
 *   PGW_WEBHOOK_SECRET  the whsec_ of an endpoint already pointing here; unset: one is registered
 *   MERCHANT_PORT       default 4242 (0: any free port)
 *   MERCHANT_DATA_DIR   where the shop keeps its records (default <os tmpdir>/pgw-merchant-express)
 */
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@pgw/client';
import { registerWebhookEndpoint, startMerchant } from './merchant';

const gatewayUrl = process.env.PGW_BASE_URL ?? 'http://localhost:3000';
let apiKey = process.env.PGW_API_KEY;
if (!apiKey) {
  const { data } = await createClient({ baseUrl: gatewayUrl }).POST('/sandbox/accounts', { body: { name: 'merchant-express example' } });
  apiKey = data.sk;
  console.log(`sandbox account ${data.id} created (PGW_API_KEY=${data.sk})`);
}
const webhookSecrets = process.env.PGW_WEBHOOK_SECRET ? [process.env.PGW_WEBHOOK_SECRET] : [];
const merchant = await startMerchant({
  gatewayUrl,
  apiKey,
  webhookSecrets,
  dataDir: process.env.MERCHANT_DATA_DIR ?? path.join(os.tmpdir(), 'pgw-merchant-express'),
  port: Number(process.env.MERCHANT_PORT ?? 4242),
});
console.log(`merchant listening on ${merchant.url}`);
if (webhookSecrets.length === 0) {
  const endpoint = await registerWebhookEndpoint(gatewayUrl, apiKey, merchant.url);
  webhookSecrets.push(endpoint.secret);
  console.log(`webhook endpoint ${endpoint.id} registered for ${merchant.url}/webhooks (PGW_WEBHOOK_SECRET=${endpoint.secret})`);
}

const stop = () => void merchant.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
