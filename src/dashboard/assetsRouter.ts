import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import express, { type Response, type Router } from 'express';
import { ROOT } from '../paths';
import { PAGE_CSP } from '../http/contentSecurityPolicy';

/** Where build.mjs writes the dashboard app (its "dashboard" target). */
export const DASHBOARD_DIST = path.join(ROOT, 'dist/dashboard');

interface Asset {
  body: Buffer;
  type: string;
  mtimeMs: number;
  /** Content hash in the shell's URLs: a new build gets new URLs, so old ones may be cached for good. */
  version: string;
}

const TYPES: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

/** Each bundle file, read again when a rebuild changed it (a developer rebuilding under a running gateway). */
// eslint-disable-next-line no-restricted-syntax -- the dashboard bundle's files on disk, the same for every gateway
const cache = new Map<string, Asset>();
function asset(name: string): Asset | undefined {
  const file = path.join(DASHBOARD_DIST, name);
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const cached = cache.get(name);
  if (cached?.mtimeMs === mtimeMs) return cached;
  const body = readFileSync(file);
  const fresh = { body, type: TYPES[name]!, mtimeMs, version: createHash('sha256').update(body).digest('hex').slice(0, 12) };
  cache.set(name, fresh);
  return fresh;
}

function shell(js: Asset, css: Asset): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Sandbox dashboard</title>',
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/dashboard/assets/app.css?v=${css.version}">`,
    `<script type="module" src="/dashboard/assets/app.js?v=${js.version}"></script>`,
    '</head>',
    '<body><div id="root"></div><noscript>The sandbox dashboard needs JavaScript.</noscript></body>',
    '</html>',
  ].join('\n');
}

function pageHeaders(res: Response): void {
  // The payment pages' own policy (src/http/contentSecurityPolicy.ts): its bundle only, GraphQL over fetch
  // and WebSocket to this origin (connect-src 'self' covers ws:/wss:), QR codes as data: images, no framing.
  res.setHeader('Content-Security-Policy', PAGE_CSP);
}

/**
 * GET /dashboard and every /dashboard/<view> path: the app's HTML shell (the app routes in the browser,
 * so a reload or a shared link of any view works), and its bundle under /dashboard/assets/. The session
 * routes (/dashboard/session) belong to the session router, whichever is mounted first. src/server.ts
 * mounts it among the app's root routers, so that REST's app knows no dashboard.
 */
export function dashboardAssetsRouter(): Router {
  const router = express.Router({ caseSensitive: true });

  router.get('/dashboard/assets/:file', (req, res, next) => {
    const name = String(req.params.file);
    const file = TYPES[name] ? asset(name) : undefined;
    if (!file) return next();
    pageHeaders(res);
    // The shell names the current version; a URL with another (or none) must not be kept.
    res.setHeader('Cache-Control', req.query.v === file.version ? 'public, max-age=31536000, immutable' : 'no-cache');
    res.type(file.type).send(file.body);
  });

  router.get(['/dashboard', '/dashboard/*view'], (req, res, next) => {
    if (req.path === '/dashboard/session' || req.path.startsWith('/dashboard/assets/')) return next();
    const js = asset('app.js');
    const css = asset('app.css');
    if (!js || !css) {
      // Only a checkout run without a build gets here (npm start builds first): say what to do.
      res.setHeader('Cache-Control', 'no-store');
      res.status(503).type('text').send('The dashboard app is not built: run `npm run build` (npm start builds it before starting).\n');
      return;
    }
    pageHeaders(res);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(shell(js, css));
  });

  return router;
}
