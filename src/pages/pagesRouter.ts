import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Request, type Response, type Router } from 'express';
import type { Config } from '../config';
import { isApiError } from '../errors';
import { logger } from '../logger';
import { redactPath } from '../domain/logs/redact';
import { AccountModel } from '../domain/accounts/accountModel';
import { getPublicCheckoutSession } from '../domain/checkout/checkoutSessionService';
import { nowForAccount } from '../domain/clock/accountTime';
import { getPublicPaymentLink } from '../domain/links/paymentLinkService';
import { ROOT } from '../paths';
import { enforceRateLimit } from '../http/rateLimit';
import { PAGE_CSP } from '../http/contentSecurityPolicy';
import { ipBucket } from '../operations/rateLimitPolicy';
import { renderMessagePage, renderPaymentPage } from './paymentPage';
import { rootPage } from './rootPage';

const ASSETS_DIR = path.join(ROOT, 'src/pages/assets');

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

function sendPage(res: Response, status: number, html: string): void {
  securityHeaders(res);
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).type('html').send(html);
}

/**
 * The public payment-link and checkout pages (`GET /pay/<code>`, `GET /checkout/<id>`) and their
 * assets, mounted at the root by createApp's `rootRouters`. Pages count against the same per-IP
 * limit as the public JSON routes behind them.
 */
export function createPagesRouter(config: Config): Router {
  const assets = {
    'pay.js': { body: readFileSync(path.join(ASSETS_DIR, 'pay.js'), 'utf8'), type: 'text/javascript; charset=utf-8' },
    'pay.css': { body: readFileSync(path.join(ASSETS_DIR, 'pay.css'), 'utf8'), type: 'text/css; charset=utf-8' },
  };
  const router = express.Router({ caseSensitive: true });

  // A person's pointer to the dashboard and docs; API clients fall through to the JSON 404.
  router.get('/', rootPage);

  router.get('/pay-assets/:file', (req, res, next) => {
    const asset = assets[req.params.file as keyof typeof assets];
    if (!asset) return next();
    securityHeaders(res);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type(asset.type).send(asset.body);
  });

  router.get('/pay/:code', page(config, async (req) => {
    try {
      const link = await getPublicPaymentLink(String(req.params.code));
      return {
        status: 200,
        html: renderPaymentPage({
          kind: 'link',
          key: link.code,
          merchantName: await merchantName(link.account_id),
          amount: link.amount,
          description: link.description,
          methods: link.methods,
          payUrl: `/v1/public/payment_links/${encodeURIComponent(link.code)}/payments`,
        }),
      };
    } catch (err) {
      if (isApiError(err) && err.code === 'payment_link_inactive') {
        return {
          status: 410,
          html: renderMessagePage({
            title: 'This payment link is no longer active',
            message: 'The merchant has deactivated this link, so it cannot be paid. Payments made earlier are not affected. Ask the merchant for a new link.',
          }),
        };
      }
      if (isApiError(err) && err.code === 'resource_not_found') {
        return {
          status: 404,
          html: renderMessagePage({ title: 'Payment link not found', message: 'There is no payment link at this address. Check the link or QR code you were given.' }),
        };
      }
      throw err;
    }
  }));

  router.get('/checkout/:id', page(config, async (req) => {
    try {
      const s = await getPublicCheckoutSession(String(req.params.id));
      if (s.status === 'COMPLETED') {
        return {
          status: 410,
          html: renderMessagePage({
            title: 'This checkout session has already been paid',
            message: 'The payment for this order was confirmed. There is nothing more to pay here.',
            links: [{ href: s.success_url, text: 'Continue to the shop' }],
          }),
        };
      }
      if (s.status === 'EXPIRED') {
        return {
          status: 410,
          html: renderMessagePage({
            title: 'This checkout session has expired',
            message: 'Checkout sessions can be paid for 30 minutes. Return to the shop to start again.',
            links: [{ href: s.cancel_url, text: 'Return to the shop' }],
          }),
        };
      }
      if (s.expires_at.getTime() <= (await nowForAccount(s.account_id)).getTime()) {
        // OPEN past its 30 minutes: it follows a reference payment started here, and takes no new one.
        return {
          status: 200,
          html: renderMessagePage({
            title: 'This checkout session is waiting for its reference payment',
            message:
              'A Multicaixa reference was issued for this order. Pay it at an ATM or in online banking before it expires; no new payment can be started here.',
            links: [{ href: s.cancel_url, text: 'Return to the shop' }],
          }),
        };
      }
      return {
        status: 200,
        html: renderPaymentPage({
          kind: 'checkout',
          key: s._id,
          merchantName: await merchantName(s.account_id),
          amount: s.amount,
          description: null,
          methods: s.methods,
          payUrl: `/v1/public/checkout/sessions/${encodeURIComponent(s._id)}/payments`,
          successUrl: s.success_url,
          cancelUrl: s.cancel_url,
          expiresAt: new Date(s.expires_at).toISOString(),
        }),
      };
    } catch (err) {
      if (isApiError(err) && err.code === 'resource_not_found') {
        return {
          status: 404,
          html: renderMessagePage({ title: 'Checkout session not found', message: 'There is no checkout session at this address. Return to the shop and start again.' }),
        };
      }
      throw err;
    }
  }));

  return router;
}

type PageHandler = (req: Request) => Promise<{ status: number; html: string }>;

/** Rate limit, render, and answer every failure with a page rather than JSON. */
function page(config: Config, handler: PageHandler) {
  return async (req: Request, res: Response): Promise<void> => {
    try {
      await enforceRateLimit(res, ipBucket('public', req.ip ?? req.socket.remoteAddress ?? 'unknown'), config.publicRateLimitPerMinute);
      const { status, html } = await handler(req);
      sendPage(res, status, html);
    } catch (err) {
      if (isApiError(err) && err.code === 'rate_limit_exceeded') {
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        sendPage(res, 429, renderMessagePage({ title: 'Too many requests', message: 'Please wait a minute and reload this page.' }));
        return;
      }
      logger.error({ err, path: redactPath(req.path) }, 'page failed');
      sendPage(res, 500, renderMessagePage({ title: 'Something went wrong', message: 'The page could not be shown. Please reload it in a moment.' }));
    }
  };
}

async function merchantName(accountId: string): Promise<string> {
  const account = await AccountModel.findById(accountId, { name: 1 }).lean();
  return account?.name ?? 'Merchant';
}
