import type { NextFunction, Request, Response } from 'express';

/**
 * The policy for everything that is not an HTML page (JSON, the event streams, SVG, YAML, scripts):
 * such an answer must never run or load anything, nor be framed, even when a browser is tricked into
 * rendering it as a document (an SVG QR code opened directly, a JSON error echoing input). HTML pages
 * replace it with a policy of their own that lets them work: the payment pages (pagesRouter.ts),
 * GraphiQL (graphiql.ts) and the API docs (systemRoutes.ts).
 */
export const NON_PAGE_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Security headers on every response, set before any route runs so that errors, 404s and answers from
 * routers mounted later carry them too:
 * - `X-Frame-Options: DENY` (and `frame-ancestors 'none'` in every CSP): no page of the gateway can be
 *   framed, so a checkout page cannot be clickjacked into paying;
 * - `X-Content-Type-Options: nosniff`: a JSON or SVG answer is never sniffed into script or HTML;
 * - `Referrer-Policy: no-referrer`: URLs carry capabilities (checkout session ids, payment-link codes),
 *   which must not leak to the shop's success_url or anywhere else.
 */
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', NON_PAGE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}
