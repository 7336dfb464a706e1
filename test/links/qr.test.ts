import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import type { TestServer } from '../support/server';
import { decodeQrSvg } from './qrDecode';
import { createLink, expectError, getRaw, startGatewayWithJobs } from './support/gateway';

/**
 * QR codes are checked the way a phone would: the SVG is rasterised (resvg) and decoded (jsQR), and
 * what it says must be exactly the link url.
 */
const PUBLIC_BASE = 'https://pay.example.test';
let server: TestServer;
beforeAll(async () => {
  server = await startGatewayWithJobs({ PUBLIC_BASE_URL: PUBLIC_BASE });
});
afterAll(async () => server?.stop());

function expect512(svg: string): void {
  expect(svg.startsWith('<svg')).toBe(true);
  expect(svg).toMatch(/<svg[^>]*\swidth="512"/);
  expect(svg).toMatch(/<svg[^>]*\sheight="512"/);
  expect(svg).toMatch(/<svg[^>]*\sviewBox="0 0 \d+ \d+"/);
}

describe('GET /payment_links/{id}/qr', () => {
  it('is a 512 × 512 SVG that decodes to the link url', async () => {
    const { api, sk } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 7500, description: 'Camisola' });
    const res = await getRaw(server.baseUrl, `/payment_links/${link.id}/qr`, sk);
    expect(res.status).toBe(200);
    expect(res.contentType).toContain('image/svg+xml');
    expect512(res.text);
    const decoded = decodeQrSvg(res.text);
    expect(decoded).not.toBeNull();
    expect(decoded!.width).toBe(512);
    expect(decoded!.height).toBe(512);
    expect(decoded!.text).toBe(link.url);
    expect(decoded!.text).toBe(`${PUBLIC_BASE}/pay/${link.code}`);
  });

  it('takes the link id, not the code; other accounts get 404', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const link = await createLink(a.api, { amount: 100 });
    expectError(await a.api.get(`/payment_links/${link.code}/qr`), 404, 'resource_not_found');
    expectError(await b.api.get(`/payment_links/${link.id}/qr`), 404, 'resource_not_found');
  });
});

describe('POST /qr_codes', () => {
  it('for an existing link code: a QrCode whose svg decodes to that link url', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 2000 });
    const res = await api.post('/qr_codes', { payment_link: link.code });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ object: 'qr_code', payment_link: link.code, url: link.url, livemode: false });
    expect(res.body.id).toMatch(/^qr_[0-9A-Za-z]{24}$/);
    expect512(res.body.svg);
    expect(decodeQrSvg(res.body.svg)?.text).toBe(link.url);
  });

  it('with an amount: creates a new link (all active methods) and encodes its url', async () => {
    const { api } = await createAccount(server.baseUrl);
    const res = await api.post('/qr_codes', { amount: 4500, description: 'Água' });
    expect(res.status, res.text).toBe(201);
    const links = (await api.get('/payment_links')).body.data;
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ code: res.body.payment_link, url: res.body.url, amount: 4500, description: 'Água', active: true });
    expect(links[0].methods).toEqual(['multicaixa_express', 'multicaixa_reference']);
    expect(decodeQrSvg(res.body.svg)?.text).toBe(res.body.url);
  });

  it('both or neither of payment_link and amount is 400; an unknown code is 404', async () => {
    const { api } = await createAccount(server.baseUrl);
    const link = await createLink(api, { amount: 2000 });
    expectError(await api.post('/qr_codes', { payment_link: link.code, amount: 100 }), 400, 'invalid_request');
    expectError(await api.post('/qr_codes', {}), 400, 'invalid_request');
    expectError(await api.post('/qr_codes', { payment_link: link.code, description: 'x' }), 400, 'invalid_request');
    expectError(await api.post('/qr_codes', { amount: 50 }), 400, 'amount_out_of_range');
    expectError(await api.post('/qr_codes', { payment_link: 'ZZZZZZZZ' }), 404, 'resource_not_found');
    // Another account's code is unknown to this one.
    const other = await createAccount(server.baseUrl);
    expectError(await other.api.post('/qr_codes', { payment_link: link.code }), 404, 'resource_not_found');
  });
});
