import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { databaseReady } from '../db/connection';
import { packageDir, ROOT } from '../paths';

/**
 * Routes outside /v1 that are neither authenticated nor rate limited: health probes, the contract
 * itself, and a docs page rendered from it by swagger-ui-dist served from node_modules (no CDN: the
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
  router.get('/readyz', async (_req, res) => {
    const ready = await databaseReady();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'database_unreachable' });
  });
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(yamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(jsonText);
  });
  router.use('/docs/assets', express.static(swaggerDir, { index: false, fallthrough: false }));
  router.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  return router;
}

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
  <script>
    window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true });
  </script>
</body>
</html>`;
