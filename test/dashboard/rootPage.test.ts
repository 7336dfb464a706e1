import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedGateway, type TestServer } from '../support/server';

/**
 * Issue 58: `GET /` answers a person (a browser asks for HTML first) with a page pointing at the
 * dashboard, the docs and GraphQL, under the pages' CSP; every API client gets the JSON 404 as before.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
}, 60_000);
afterAll(async () => server?.stop(), 60_000);

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('GET /', () => {
  it('answers a browser with a page linking the dashboard, the docs and GraphQL, no inline code', async () => {
    const res = await fetch(`${server.baseUrl}/`, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('vary')).toMatch(/Accept/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    const links = [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1]);
    expect(links).toEqual(['/dashboard', '/docs', '/graphql', '/openapi.yaml']);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|\sstyle=|<style/);
    // The docs and GraphiQL answer a browser (the dashboard's bundle is built by the browser tests: shell.browser.test.ts follows that link).
    for (const href of ['/docs', '/graphql']) {
      expect((await fetch(`${server.baseUrl}${href}`, { headers: { accept: BROWSER_ACCEPT } })).status, href).toBe(200);
    }
  });

  it('answers API clients with the JSON 404 as before', async () => {
    for (const accept of [undefined, 'application/json', '*/*', 'application/json, text/html', 'text/plain']) {
      const res = await fetch(`${server.baseUrl}/`, { headers: accept === undefined ? {} : { accept } });
      expect(res.status, String(accept)).toBe(404);
      expect(res.headers.get('content-type'), String(accept)).toMatch(/^application\/json/);
      const body = await res.json();
      expect(body).toEqual({ error: { code: 'resource_not_found', message: 'Unrecognized request URL (GET /)', request_id: expect.stringMatching(/^req_/) } });
    }
    // And a POST, whatever it accepts.
    const post = await fetch(`${server.baseUrl}/`, { method: 'POST', headers: { accept: BROWSER_ACCEPT } });
    expect(post.status).toBe(404);
  });
});
