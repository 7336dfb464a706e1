import type { NextFunction, Request, Response } from 'express';
import { NON_PAGE_CSP } from '../http/contentSecurityPolicy';

/**
 * Security headers on every response, set before any route runs so that errors, 404s and answers from
 * routers mounted later carry them too (HTML pages then replace the CSP with theirs):
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
