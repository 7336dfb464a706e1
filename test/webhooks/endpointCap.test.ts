import { describe, expect, it } from 'vitest';
import { ACCOUNT_CAPS } from '../../src/domain/accountCaps';
import { createAccount } from '../support/accounts';
import { useGatewayAndReceiver } from './support/gateway';
import { createEndpoint } from './support/webhooks';

/** Issue 16: an account holds at most ACCOUNT_CAPS.webhookEndpoints endpoints (each event fans out to every one). */
const ctx = useGatewayAndReceiver();

describe('endpoints per account', () => {
  it(`are capped at ${ACCOUNT_CAPS.webhookEndpoints}, also under concurrent creates; deleting one frees a place`, async () => {
    const { api } = await createAccount(ctx.server.baseUrl);
    const results = await Promise.all(
      Array.from({ length: ACCOUNT_CAPS.webhookEndpoints + 6 }, (_, i) => api.post('/webhook_endpoints', { url: `${ctx.receiver.url}/cap/${i}` })),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(created.length).toBeLessThanOrEqual(ACCOUNT_CAPS.webhookEndpoints);
    for (const r of refused) {
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
    // Creates racing at the cap may all be refused; one at a time then fills it exactly.
    for (let i = created.length; i < ACCOUNT_CAPS.webhookEndpoints; i++) await createEndpoint(api, `${ctx.receiver.url}/cap/fill${i}`);
    const over = await api.post('/webhook_endpoints', { url: `${ctx.receiver.url}/cap/over` });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'invalid_request' });
    expect(over.body.error.message).toMatch(new RegExp(`${ACCOUNT_CAPS.webhookEndpoints} webhook endpoints`));
    const list = (await api.get('/webhook_endpoints')).body.data;
    expect(list).toHaveLength(ACCOUNT_CAPS.webhookEndpoints);

    expect((await api.delete(`/webhook_endpoints/${list[0].id}`)).status).toBe(200);
    await createEndpoint(api, `${ctx.receiver.url}/cap/after-delete`);
  }, 60_000);
});
