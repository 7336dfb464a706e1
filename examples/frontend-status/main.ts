/**
 * `npx tsx examples/frontend-status/main.ts` with the gateway running (`npm start`), then open the URL it
 * prints (on a phone: the same network, and PGW_BASE_URL an address the phone reaches).
 *
 *   PGW_BASE_URL   the gateway, as the browser reaches it (default http://localhost:3000)
 *   PGW_API_KEY    the shop's sk_test_ key; unset: a new sandbox account is made
 *   MERCHANT_PORT  default 4100 (0: any free port)
 */
import { createClient } from '@pgw/client';
import { startCheckoutServer } from './server';

const gatewayUrl = process.env.PGW_BASE_URL ?? 'http://localhost:3000';
let secretKey = process.env.PGW_API_KEY;
if (!secretKey) {
  const { data } = await createClient({ baseUrl: gatewayUrl }).POST('/sandbox/accounts', { body: { name: 'frontend-status example' } });
  secretKey = data.sk;
  console.log(`sandbox account ${data.id} created (PGW_API_KEY=${data.sk})`);
}
const checkout = await startCheckoutServer({ gatewayUrl, secretKey, port: Number(process.env.MERCHANT_PORT ?? 4100), host: 'localhost' });
console.log(`checkout page on ${checkout.url} (mobile 923000000 pays, 923000001 declines)`);

const stop = () => void checkout.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
