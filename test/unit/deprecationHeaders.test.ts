import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations';
import { deprecationHeaders } from '../../src/rest/deprecation';

/**
 * What src/rest/deprecation.ts answers for each kind of deprecation openapi.yaml can state. The contract
 * deprecates one parameter today (test/clientTokens/deprecatedQueryToken.test.ts proves it over HTTP); a
 * deprecated route, a sunset date and a successor are given here as codegen.ts would generate them.
 */
const request = (query: Record<string, string> = {}, headers: Record<string, string> = {}) => ({ query, headers }) as unknown as Request;

describe('deprecationHeaders', () => {
  it('is null for an operation with nothing deprecated, so the hot path pays nothing', () => {
    expect(deprecationHeaders(operations.createPaymentIntent)).toBeNull();
    expect(deprecationHeaders(operations.getPaymentIntent)).toBeNull();
  });

  it('a deprecated route: Deprecation, Sunset as an HTTP date, its docs and its successor in Link, on every answer', () => {
    const headers = deprecationHeaders({
      basePath: '/v1',
      deprecation: { since: '2026-12-06', sunset: '2027-03-01', successor: '/payment_intents/{id}', docs: '/docs#/Payments/getPayment' },
    })!;
    expect(headers(request())).toEqual({
      Deprecation: '@1796515200',
      Sunset: 'Mon, 01 Mar 2027 00:00:00 GMT',
      Link: '</docs#/Payments/getPayment>; rel="deprecation", </v1/payment_intents/{id}>; rel="successor-version"',
    });
  });

  it('a deprecated parameter: only when the request uses it, with the earliest dates among those it uses', () => {
    const headers = deprecationHeaders({
      basePath: '/v1',
      deprecatedParameters: [
        { in: 'query', name: 'old', since: '2026-12-06', sunset: '2027-06-01', docs: '/docs#/Tag/op' },
        { in: 'header', name: 'X-Old', since: '2026-11-01', sunset: '2027-03-01', docs: '/docs#/Tag/op' },
      ],
    })!;
    expect(headers(request())).toBeNull();
    expect(headers(request({ other: '1' }))).toBeNull();
    expect(headers(request({ old: '1' }))).toEqual({ Deprecation: '@1796515200', Sunset: 'Tue, 01 Jun 2027 00:00:00 GMT', Link: '</docs#/Tag/op>; rel="deprecation"' });
    expect(headers(request({ old: '1' }, { 'x-old': 'v' }))).toMatchObject({ Deprecation: '@1793491200', Sunset: 'Mon, 01 Mar 2027 00:00:00 GMT' });
  });

  it('reads the contract: the client_token query parameter of getPublicPayment', () => {
    expect(operations.getPublicPayment.deprecatedParameters).toEqual([{ in: 'query', name: 'client_token', since: '2026-12-06', docs: '/docs#/Public/getPublicPayment' }]);
    expect(deprecationHeaders(operations.getPublicPayment)!(request({ client_token: 'ct_test_x' }))).toEqual({
      Deprecation: '@1796515200',
      Link: '</docs#/Public/getPublicPayment>; rel="deprecation"',
    });
  });
});
