// Deprecation on the wire (issue 57): the `client_token` query parameter of GET /v1/public/payments/{id}
// is deprecated in favour of `Authorization: Bearer ct_test_…`. Both work; a request that uses the
// parameter is told so in headers (RFC 9745 Deprecation, Link rel="deprecation"), and nothing else changes.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { sharedGateway, type TestServer } from '../support/server';
import { createExpressPayment, expectErrorEnvelope, mintToken } from './support';

/** 2026-12-06T00:00:00Z, the parameter's x-deprecated-at in openapi.yaml. */
const DEPRECATED_AT = '@1796515200';
const DOCS_LINK = '</docs#/Public/getPublicPayment>; rel="deprecation"';

let server: TestServer;
let acct: TestAccount;
let anon: ApiClient;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  anon = new ApiClient(server.baseUrl);
});

describe('GET /v1/public/payments/{id}: the token in Authorization, or (deprecated) in the query', () => {
  it('answers the same view both ways; only the query form carries Deprecation and Link', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const viaHeader = await anon.get(`/public/payments/${payment.id}`, { headers: { authorization: `Bearer ${token}` } });
    const viaQuery = await anon.get(`/public/payments/${payment.id}?client_token=${token}`);
    expect(viaHeader.status, viaHeader.text).toBe(200);
    expect(viaQuery.status, viaQuery.text).toBe(200);
    expect(viaQuery.body).toEqual(viaHeader.body);

    expect(viaHeader.headers.get('deprecation')).toBeNull();
    expect(viaHeader.headers.get('link')).toBeNull();
    expect(viaQuery.headers.get('deprecation')).toBe(DEPRECATED_AT);
    expect(viaQuery.headers.get('link')).toBe(DOCS_LINK);
    // No date is set for its removal yet.
    expect(viaQuery.headers.get('sunset')).toBeNull();
  });

  it('lets a browser on another origin read those headers (CORS exposes them)', async () => {
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const res = await anon.get(`/public/payments/${payment.id}?client_token=${token}`, { headers: { origin: 'https://shop.example' } });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['deprecation', 'sunset', 'link']));
  });

  it('says so on refusals too, and a request without any token is 400 invalid_request', async () => {
    const payment = await createExpressPayment(acct);
    const wrong = await anon.get(`/public/payments/${payment.id}?client_token=ct_test_${'0'.repeat(32)}`);
    expectErrorEnvelope(wrong, 401, 'authentication_failed');
    expect(wrong.headers.get('deprecation')).toBe(DEPRECATED_AT);
    const none = await anon.get(`/public/payments/${payment.id}`);
    expectErrorEnvelope(none, 400, 'invalid_request');
    expect(none.body.error.message).toContain('Authorization: Bearer');
    expect(none.headers.get('deprecation')).toBeNull();
  });

  it('is marked in the contract the docs page reads, with its date and the way instead', async () => {
    const doc = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as any;
    const op = doc.paths['/public/payments/{id}'].get;
    const params = op.parameters.map((p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p));
    const param = params.find((p: any) => p.name === 'client_token');
    expect(param).toMatchObject({ in: 'query', required: false, deprecated: true, 'x-deprecated-at': '2026-12-06' });
    expect(param.description).toContain('Authorization: Bearer');
    // The Link's target: Swagger UI's deep link is #/<first tag>/<operationId>.
    expect(op.tags[0]).toBe('Public');
    expect(op.operationId).toBe('getPublicPayment');
  });
});
