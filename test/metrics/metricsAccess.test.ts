import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackPeer } from '../../src/rest/metricsRoutes';
import { startTestServer, type TestServer } from '../support/server';
import { nonLoopbackIPv4, viaAddress } from '../support/peers';

/**
 * Who reads GET /metrics without METRICS_TOKEN (contract decisions, "Hostile clients at the edge"):
 * only a loopback peer; any other address gets 403 `permission_denied`. And /metrics is rate limited
 * per client address (PUBLIC_RATE_LIMIT_PER_MINUTE), 429 past it.
 *
 * The peer is the TCP socket's. A non-loopback peer is real here: a gateway listening on all addresses
 * is reached through this machine's own non-loopback address, which the kernel then reports as the peer.
 */
const LIMIT = 4;

describe('isLoopbackPeer', () => {
  it('takes 127.0.0.0/8, ::1 and IPv4 loopback mapped into IPv6, and nothing else', () => {
    for (const a of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.3.2.1']) expect(isLoopbackPeer(a), a).toBe(true);
    for (const a of [undefined, '', 'unknown', '128.0.0.1', '10.0.0.1', '192.0.2.2', '::ffff:10.0.0.1', '::2', '1::1', 'fe80::1', '::', '::ffff:1.127.0.1', '127.0.0.1.evil', 'localhost']) {
      expect(isLoopbackPeer(a), String(a)).toBe(false);
    }
  });
});

const outside = nonLoopbackIPv4();
if (!outside) console.warn('\n\n*** SKIPPED in test/metrics/metricsAccess.test.ts: the 403 to a non-loopback peer (this machine has no non-loopback IPv4 address) ***\n\n');

describe('GET /metrics without METRICS_TOKEN', () => {
  let server: TestServer;
  let port: string;
  beforeAll(async () => {
    server = await startTestServer({ HOST: '0.0.0.0', PUBLIC_RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    port = new URL(server.baseUrl).port;
  });
  afterAll(async () => server?.stop());

  it.skipIf(!outside)('answers 403 permission_denied in the error envelope to a non-loopback peer', async () => {
    const res = await fetch(`${viaAddress(server.baseUrl, outside!)}/metrics`, { headers: { 'X-Forwarded-For': '127.0.0.1' } });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
    expect(body.error.code).toBe('permission_denied');
    expect(body.error.message).toMatch(/METRICS_TOKEN/);
    expect(body.error.request_id).toBe(res.headers.get('request-id'));
  });

  it('serves a loopback peer, then 429 past the per-address limit, Retry-After saying when', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < LIMIT + 2; i++) {
      last = await fetch(`http://127.0.0.1:${port}/metrics`);
      statuses.push(last.status);
      if (last.status === 200) expect(await last.text()).toContain('# TYPE pgw_http_requests_total counter');
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429, 429]);
    const body = (await last!.json()) as { error: { code: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
  });
});
