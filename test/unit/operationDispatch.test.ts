import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationDispatcher, type OperationRoute } from '../../src/rest/operationDispatch';
import { operations } from '../../src/operations/contract';

/**
 * The dispatcher must route exactly as the Express routers it replaced (one Router per resource under
 * /v1, `caseSensitive: true, strict: false`, doubled slashes refused). Both serve the contract's own
 * routes here, over HTTP, and every request below must get the same answer from each.
 */
const routes = Object.values(operations)
  .filter((op) => op.basePath === '/v1')
  .map((op) => ({ method: op.method, path: op.expressPath, name: op.operationId }));

const echo = (name: string): RequestHandler => (req, res) => {
  res.json({ name, params: req.params });
};
const notFound: RequestHandler = (_req, res) => {
  res.status(404).json({ notFound: true });
};
const onError: ErrorRequestHandler = (err, _req, res, _next) => {
  res.status(599).json({ uriError: err instanceof URIError, message: (err as Error).message });
};

function expressRouters(): express.Express {
  const options = { caseSensitive: true, strict: false };
  const resources = new Map<string, express.Router>();
  for (const route of routes) {
    const [, segment = '', ...rest] = route.path.split('/');
    let resource = resources.get(segment);
    if (!resource) resources.set(segment, (resource = express.Router(options)));
    resource[route.method.toLowerCase() as 'get' | 'post' | 'delete'](`/${rest.join('/')}`, echo(route.name));
  }
  const api = express.Router(options);
  for (const [segment, resource] of resources) api.use(`/${segment}`, resource);
  const v1 = express.Router(options);
  v1.use((req, res, next) => (req.path.includes('//') ? next() : api(req, res, next)));
  return appWith(v1);
}

function dispatcher(): express.Express {
  const v1 = express.Router({ caseSensitive: true, strict: false });
  const table: OperationRoute[] = routes.map((r) => ({ method: r.method, path: r.path, handler: echo(r.name) }));
  v1.use(operationDispatcher(table));
  return appWith(v1);
}

function appWith(v1: express.Router): express.Express {
  const app = express();
  app.set('etag', false);
  app.use('/v1', v1);
  app.use(notFound);
  app.use(onError);
  return app;
}

let servers: Server[] = [];
let oldUrl = '';
let newUrl = '';

beforeAll(async () => {
  const listen = (app: express.Express) =>
    new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
  servers = [await listen(expressRouters()), await listen(dispatcher())];
  const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  oldUrl = url(servers[0]!);
  newUrl = url(servers[1]!);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

async function answer(base: string, method: string, path: string) {
  const res = await fetch(base + path, { method });
  return { status: res.status, allow: res.headers.get('allow'), contentType: res.headers.get('content-type'), body: await res.text() };
}

const id = 'pay_' + 'a'.repeat(24);
const cases: Array<[string, string]> = [
  ['GET', `/v1/payment_intents/${id}`],
  ['GET', `/v1/payment_intents/${id}/`],
  ['GET', `/v1/payment_intents/${id}//`],
  ['GET', `/v1//payment_intents/${id}`],
  ['GET', `/v1/payment_intents//${id}`],
  ['GET', `/v1/Payment_intents/${id}`],
  ['GET', `/V1/payment_intents/${id}`],
  ['GET', '/v1/payment_intents'],
  ['GET', '/v1/payment_intents/'],
  ['GET', '/v1/payment_intents?limit=2'],
  ['GET', `/v1/payment_intents/${id}?x=1`],
  ['GET', `/v1/payment_intents/${id}/events`],
  ['POST', `/v1/payment_intents/${id}/cancel`],
  ['POST', `/v1/payment_intents/${id}/cancel/`],
  ['GET', `/v1/payment_intents/${id}/cancel`],
  ['HEAD', `/v1/payment_intents/${id}`],
  ['HEAD', '/v1/payment_intents'],
  ['OPTIONS', '/v1/payment_intents'],
  ['OPTIONS', `/v1/payment_intents/${id}`],
  ['OPTIONS', '/v1/nothing'],
  ['PUT', `/v1/payment_intents/${id}`],
  ['PATCH', '/v1/payment_intents'],
  ['DELETE', `/v1/payment_intents/${id}`],
  ['GET', '/v1/payment_intents/%zz'],
  ['GET', '/v1/payment_intents/pay_%41bc'],
  ['GET', `/v1/payment_intents/${id}%2Fcancel`],
  ['GET', '/v1/payment%5Fintents'],
  ['GET', `/v1/payment_intents/${id}.json`],
  ['GET', `/v1/payment_intents/${id};x`],
  ['GET', '/v1'],
  ['GET', '/v1/'],
  ['GET', '/v1/nothing'],
  ['GET', '/v1/account'],
  ['GET', '/v1/account/'],
  ['GET', '/v1/payment_methods'],
  ['GET', '/v1/public/payment_links/abcdefgh'],
  ['POST', '/v1/public/payment_links/abcdefgh/payments'],
  ['GET', `/v1/public/payments/${id}`],
  ['GET', `/v1/public/payments/${id}/events`],
  ['GET', '/v1/sandbox/clock'],
  ['POST', '/v1/sandbox/clock/advance'],
  ['POST', '/v1/sandbox/accounts'],
  ['GET', '/v1/refunds/rf_abc'],
  ['GET', '/v1/webhook_endpoints/whe_abc/deliveries'],
  ['POST', '/v1/webhook_endpoints/whe_abc/deliveries/whd_x/retry'],
  ['DELETE', '/v1/api_keys/key_abc'],
  ['DELETE', '/v1/client_tokens/ctok_abc'],
  ['GET', '/v1/logs?limit=1'],
  ['GET', '/v1/events/evt_abc'],
];

describe('operationDispatcher routes as the Express routers it replaced', () => {
  it('serves every operation of the contract', async () => {
    for (const route of routes) {
      const path = route.path.replace(/:(\w+)/g, (_m, name: string) => `x_${name}`);
      const got = await answer(newUrl, route.method, `/v1${path}`);
      expect(got.status, `${route.method} ${path}`).toBe(200);
      expect(JSON.parse(got.body).name).toBe(route.name);
    }
  });

  it.each(cases)('%s %s', async (method, path) => {
    const [before, after] = await Promise.all([answer(oldUrl, method, path), answer(newUrl, method, path)]);
    expect(after).toEqual(before);
  });
});
