import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { Router, type Request } from 'express';
import type { Config } from '../config';
import { packageDir } from '../paths';

/**
 * GraphiQL at `GET /graphql` (browsers, `Accept: text/html`), served from the npm packages installed
 * with the gateway: no CDN, so it works offline and nothing third-party runs next to a secret key.
 * Queries and mutations go over HTTP with the headers typed in GraphiQL's header editor; subscriptions
 * go over graphql-ws with the same `Authorization` value as `connectionParams.authorization`.
 */
const ASSETS: Record<string, { file: string; type: string }> = {
  'react.production.min.js': { file: path.join(packageDir('react'), 'umd/react.production.min.js'), type: 'text/javascript' },
  'react-dom.production.min.js': { file: path.join(packageDir('react-dom'), 'umd/react-dom.production.min.js'), type: 'text/javascript' },
  'graphiql.min.js': { file: path.join(packageDir('graphiql'), 'graphiql.min.js'), type: 'text/javascript' },
  'graphiql.min.css': { file: path.join(packageDir('graphiql'), 'graphiql.min.css'), type: 'text/css' },
  'graphql-ws.js': { file: path.join(packageDir('graphql-ws'), 'umd/graphql-ws.js'), type: 'text/javascript' },
};

export const GRAPHIQL_ASSET_PATH = '/graphql/assets';

const DEFAULT_QUERY = `# Put your secret key in the Headers tab below:
#   { "Authorization": "Bearer sk_test_..." }
query Overview {
  account { id name }
  paymentMethods { code status minAmount maxAmount }
  paymentIntents(first: 5) {
    nodes { id amount status paymentMethod createdAt }
    pageInfo { hasNextPage endCursor }
  }
}
`;

/**
 * The page loads only same-origin files: no inline script, no third party, and it connects to its own
 * origin only (HTTP, and WebSocket for subscriptions). CSP3 browsers count ws:/wss: to the page's own
 * host as 'self'; older ones do not, so the WebSocket origins are named too: the host the browser asked
 * for (its Host header, when it is a plain host[:port]; the page connects to `location`'s host), over
 * ws: and wss: alike (a TLS proxy in front makes the page https while the gateway sees http), and
 * PUBLIC_BASE_URL's when it is set. Never a bare `ws:`/`wss:`, which allowed any host.
 */
function pageCsp(req: Request, config: GraphiqlOrigins): string {
  const sockets = new Set<string>();
  const host = req.headers.host;
  if (host !== undefined && PLAIN_HOST.test(host)) {
    sockets.add(`ws://${host}`);
    sockets.add(`wss://${host}`);
  }
  if (config.publicBaseUrlFromEnv) {
    const base = new URL(config.publicBaseUrl);
    sockets.add(`${base.protocol === 'https:' ? 'wss:' : 'ws:'}//${base.host}`);
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    // GraphiQL's editors set inline style attributes.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    ["connect-src 'self'", ...sockets].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** A host name, IPv4 or bracketed IPv6 address, and an optional port: nothing that could add to a CSP. */
const PLAIN_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

type GraphiqlOrigins = Pick<Config, 'publicBaseUrl' | 'publicBaseUrlFromEnv'>;

function page(): string {
  const a = GRAPHIQL_ASSET_PATH;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · Payment gateway sandbox</title>
<link rel="stylesheet" href="${a}/graphiql.min.css">
<link rel="stylesheet" href="${a}/graphiql-page.css">
</head>
<body>
<p id="key-prompt" class="key-prompt" role="status">Put your secret key (<code>sk_test_…</code>) or a restricted key in the <strong>Headers</strong> tab below, as <code>{"Authorization": "Bearer sk_test_…"}</code>. The schema (docs and completion) loads once a key is given.</p>
<div id="graphiql">Loading GraphiQL…</div>
<script src="${a}/react.production.min.js"></script>
<script src="${a}/react-dom.production.min.js"></script>
<script src="${a}/graphql-ws.js"></script>
<script src="${a}/graphiql.min.js"></script>
<script src="${a}/graphiql-boot.js"></script>
</body>
</html>
`;
}

const PAGE_CSS = `html,body{height:100%;margin:0}
body{display:flex;flex-direction:column}
#graphiql{flex:1;min-height:0}
.key-prompt{margin:0;padding:8px 16px;font:14px/1.4 system-ui,sans-serif;background:#fff8e1;color:#3d2e00;border-bottom:1px solid #e0c36a}
.key-prompt[hidden]{display:none}
`;

/**
 * Starts GraphiQL. Queries and mutations go over HTTP with the header editor's headers; subscriptions
 * over graphql-ws, one client per Authorization value, which it sends as connectionParams.authorization.
 * Without a key the page does not ask for the schema (which only answered "Invalid API key"): GraphiQL
 * gets `schema: null` and the page a prompt; the first time the header editor holds a key, GraphiQL
 * is given `schema: undefined` and introspects once, with that key.
 */
function bootScript(): string {
  return `(function () {
  var httpUrl = new URL('/graphql', location.href).toString();
  var wsUrl = httpUrl.replace(/^http/, 'ws');
  var httpFetcher = GraphiQL.createFetcher({ url: httpUrl });
  var wsFetchers = {};
  function authorizationOf(headers) {
    if (!headers) return '';
    for (var k in headers) if (k.toLowerCase() === 'authorization') return String(headers[k]);
    return '';
  }
  function isSubscription(params, opts) {
    var doc = opts && opts.documentAST;
    if (!doc) return /^\\s*subscription\\b/.test(params.query || '');
    return doc.definitions.some(function (d) {
      return d.kind === 'OperationDefinition' && d.operation === 'subscription' &&
        (!params.operationName || (d.name && d.name.value === params.operationName));
    });
  }
  function fetcher(params, opts) {
    if (!isSubscription(params, opts)) return httpFetcher(params, opts);
    var auth = authorizationOf(opts && opts.headers);
    if (!wsFetchers[auth]) {
      var client = graphqlWs.createClient({ url: wsUrl, connectionParams: { authorization: auth }, lazy: true });
      wsFetchers[auth] = GraphiQL.createFetcher({ url: httpUrl, wsClient: client });
    }
    return wsFetchers[auth](params, opts);
  }
  // A key, not the placeholder: "Bearer sk_test_" or "rk_test_" and its secret.
  function hasKey(text) {
    try {
      return /^Bearer\\s+(sk|rk)_test_[A-Za-z0-9_-]{8,}$/.test(authorizationOf(JSON.parse(text || '{}')).trim());
    } catch (e) {
      return false;
    }
  }
  var keyed = false;
  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  function render() {
    root.render(
      React.createElement(GraphiQL, {
        fetcher: fetcher,
        schema: keyed ? undefined : null,
        defaultQuery: ${JSON.stringify(DEFAULT_QUERY)},
        defaultHeaders: JSON.stringify({ Authorization: 'Bearer sk_test_...' }, null, 2),
        defaultEditorToolsVisibility: 'headers',
        headerEditorEnabled: true,
        shouldPersistHeaders: false,
        onEditHeaders: function (text) {
          if (keyed || !hasKey(text)) return;
          keyed = true;
          document.getElementById('key-prompt').hidden = true;
          render();
        }
      })
    );
  }
  render();
})();
`;
}

/** True for a browser navigation (HTML preferred over JSON). */
export function wantsHtml(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

export function graphiqlRouter(config: GraphiqlOrigins): Router {
  const router = Router();
  const html = page();
  const boot = bootScript();
  router.get(`${GRAPHIQL_ASSET_PATH}/graphiql-boot.js`, (_req, res) => {
    res.type('text/javascript').setHeader('Cache-Control', 'no-cache');
    res.send(boot);
  });
  router.get(`${GRAPHIQL_ASSET_PATH}/graphiql-page.css`, (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'no-cache');
    res.send(PAGE_CSS);
  });
  router.get(`${GRAPHIQL_ASSET_PATH}/:file`, (req, res, next) => {
    const asset = ASSETS[req.params.file];
    if (!asset || !existsSync(asset.file)) return next();
    res.setHeader('Content-Type', `${asset.type}; charset=utf-8`);
    res.setHeader('Cache-Control', 'public, max-age=86400');
    createReadStream(asset.file).on('error', next).pipe(res);
  });
  router.get('/graphql', (req, res, next) => {
    if (!wantsHtml(req)) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', pageCsp(req, config));
    res.type('html').send(html);
  });
  return router;
}
