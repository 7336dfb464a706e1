import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { databaseReady } from '../db/connection';
import { packageDir, ROOT } from '../paths';

/**
 * Routes outside /v1 that are neither authenticated nor rate limited: health probes, the contract itself, and a docs page rendered from it by swagger-ui-dist served from node_modules (no CDN: the
 * service must work offline).
 */
export function systemRoutes(): Router {
  const router = express.Router();
  const yamlText = readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8');
  // The JSON form comes from `npm run codegen` (checked against the YAML in CI): parsing the YAML here
  // was the largest single cost of a start (~150 ms). Served compact, as it always was.
  const jsonText = JSON.stringify(JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')));
  const swaggerDir = packageDir('swagger-ui-dist');

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Contract decisions: 200 {"status":"ok","database":"up"} or 503 {"status":"unavailable","database":"down"}.
  router.get('/readyz', async (_req, res) => {
    const ready = await databaseReady();
    res.status(ready ? 200 : 503).json(ready ? { status: 'ok', database: 'up' } : { status: 'unavailable', database: 'down' });
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(jsonText);
  });
  router.use('/docs/assets', express.static(swaggerDir, { index: false, fallthrough: false }));
  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.type('html').send(DOCS_PAGE);
  });
  return router;
}

const DOCS_BOOT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true });`;

/**
 * swagger-ui from our own origin, and the one inline boot script by its hash (no 'unsafe-inline'): its
 * styles are set through the DOM, which style-src does not restrict; its icons are data: URIs; it
 * fetches /openapi.json and "Try it out" calls this origin. The docs browser test checks for violations.
 */
const DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${createHash('sha256').update(DOCS_BOOT).digest('base64')}'`,
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Payment Gateway Sandbox API v1</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>${DOCS_BOOT}</script>
</body>
</html>`;
