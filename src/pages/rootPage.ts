import type { RequestHandler } from 'express';
import { layout } from './html';
import { PAGE_CSP } from '../http/contentSecurityPolicy';

/**
 * `GET /` for a person (contract decisions, "a data product"): a browser that asks for HTML before
 * JSON gets a page pointing at the dashboard, the API reference and GraphQL. An API client (JSON, no
 * Accept, or `*\/*`) is passed on to the JSON 404 it always got: the answer it reads does not change.
 */
const ROOT_PAGE = layout({
  title: 'Payment gateway sandbox',
  body: `<h1 class="message-title">Payment gateway sandbox</h1>
<p class="message">A sandbox of a payment gateway for Angola (Multicaixa Express, payment by reference). The REST API answers under <code>/v1</code> with a test key.</p>
<nav class="links" aria-label="Where to go">
<a class="button-link" href="/dashboard">Open the dashboard</a>
<a href="/docs">API reference (REST)</a>
<a href="/graphql">GraphQL explorer (GraphiQL)</a>
<a href="/openapi.yaml">The contract (openapi.yaml)</a>
</nav>`,
});

export const rootPage: RequestHandler = (req, res, next) => {
  // The first type the client prefers of the two: with no Accept header (or */*), JSON, as before.
  if (req.accepts(['application/json', 'text/html']) !== 'text/html') return next();
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Vary', 'Accept');
  res.setHeader('Cache-Control', 'no-store');
  res.type('html').send(ROOT_PAGE);
};
