import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 54: GraphiQL's Content-Security-Policy lets the page connect to its own origin only. It said
 * `connect-src 'self' ws: wss:`, which let a script on the page (GraphiQL runs next to a secret key)
 * open a WebSocket to any host. Now the WebSocket origins are named: the Host the browser asked for,
 * and PUBLIC_BASE_URL's when it is set.
 */

/** GET /graphql as a browser navigation, with the Host header given (fetch may not set it). */
function graphiqlCsp(baseUrl: string, host: string): Promise<{ status: number; csp: string }> {
  const url = new URL('/graphql', baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host, accept: 'text/html' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, csp: String(res.headers['content-security-policy'] ?? '') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const directive = (csp: string, name: string) => csp.split(';').map((d) => d.trim()).find((d) => d.startsWith(`${name} `)) ?? '';

describe('GraphiQL CSP, PUBLIC_BASE_URL not set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("allows WebSocket connections to the page's own host only", async () => {
    const host = new URL(server.baseUrl).host;
    const { status, csp } = await graphiqlCsp(server.baseUrl, host);
    expect(status).toBe(200);
    expect(directive(csp, 'connect-src')).toBe(`connect-src 'self' ws://${host} wss://${host}`);
    // No scheme-only source: `ws:` alone would allow any host.
    expect(csp.split(/[\s;]+/)).not.toContain('ws:');
    expect(csp.split(/[\s;]+/)).not.toContain('wss:');
    expect(directive(csp, 'script-src')).toBe("script-src 'self'");
  });

  it('names the host the browser asked for, and nothing of a Host that is not a plain host', async () => {
    expect(directive((await graphiqlCsp(server.baseUrl, 'gateway.example:8443')).csp, 'connect-src')).toBe(
      "connect-src 'self' ws://gateway.example:8443 wss://gateway.example:8443",
    );
    expect(directive((await graphiqlCsp(server.baseUrl, '[::1]:3000')).csp, 'connect-src')).toBe("connect-src 'self' ws://[::1]:3000 wss://[::1]:3000");
    const served: string[] = [];
    for (const host of ['evil.example; connect-src *', 'evil.example *', 'evil.example/x', 'evil.example:1:2']) {
      const { status, csp } = await graphiqlCsp(server.baseUrl, host);
      if (status !== 200) continue; // Node's parser refused this Host itself
      served.push(host);
      expect(directive(csp, 'connect-src'), host).toBe("connect-src 'self'");
      expect(csp, host).not.toContain('evil');
    }
    expect(served).toContain('evil.example; connect-src *');
  });
});

describe('GraphiQL CSP, PUBLIC_BASE_URL set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ PUBLIC_BASE_URL: 'https://pay.example.com' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("adds PUBLIC_BASE_URL's origin over wss:", async () => {
    const { csp } = await graphiqlCsp(server.baseUrl, 'pay.example.com');
    expect(directive(csp, 'connect-src')).toBe("connect-src 'self' ws://pay.example.com wss://pay.example.com");
    const local = new URL(server.baseUrl).host;
    expect(directive((await graphiqlCsp(server.baseUrl, local)).csp, 'connect-src')).toBe(`connect-src 'self' ws://${local} wss://${local} wss://pay.example.com`);
  });
});
