/* global process, console, fetch, URL */
/* eslint-disable no-console -- a command-line example prints where to go */
// The merchant's server for examples/client-token: serves the page and mints a client token for the
// payment it shows. Run from the repository root:
//   GATEWAY_URL=http://localhost:3000 SECRET_KEY=sk_test_... node examples/client-token/server.mjs
// then open http://localhost:4000/?payment=pay_... (an express payment of that account).
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts the example on `port` (0 = any); resolves with its URL and a close function. */
export async function startExampleServer({ gatewayUrl, secretKey, port = 0, host = '127.0.0.1' }) {
  // graphql-ws's browser build, from the package, bundled with the page's script (no CDN).
  const bundled = await build({ entryPoints: [path.join(here, 'app.js')], bundle: true, format: 'iife', platform: 'browser', write: false, logLevel: 'silent' });
  const script = bundled.outputFiles[0].text;
  const page = (await readFile(path.join(here, 'index.html'), 'utf8')).replace('__GATEWAY_URL__', gatewayUrl);

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://example');
    if (req.method === 'POST' && url.pathname === '/client-token') {
      // The two lines that matter: mint a token for this payment with the secret key, server-side.
      const minted = await fetch(`${gatewayUrl}/v1/client_tokens`, { method: 'POST', headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ payment_intent: url.searchParams.get('payment') }) });
      const { token, error } = await minted.json();
      res.writeHead(minted.ok ? 200 : minted.status, { 'content-type': 'application/json' }).end(JSON.stringify(minted.ok ? { token } : { error }));
    } else if (url.pathname === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  return { url: `http://${host}:${server.address().port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { GATEWAY_URL = 'http://localhost:3000', SECRET_KEY, PORT = '4000' } = process.env;
  if (!SECRET_KEY) {
    console.error('Set SECRET_KEY to a sandbox secret key (sk_test_...).');
    process.exit(2);
  }
  const { url } = await startExampleServer({ gatewayUrl: GATEWAY_URL, secretKey: SECRET_KEY, port: Number(PORT), host: 'localhost' });
  console.log(`Open ${url}/?payment=<an express payment id of this account>`);
}
