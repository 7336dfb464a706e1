import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment } from '../support/payments';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { ok, waitFor } from './support/fixtures';

/**
 * No socket fault ends the process (issue 54; contract decisions, "Hostile clients at the edge"). Raw
 * TCP connections to every route family are reset (SO_LINGER 0, then close: an RST, what
 * `socket.resetAndDestroy()` sends) at each moment a client can choose: at once after connecting, in the
 * middle of the request (half its headers, half its body, half a WebSocket frame), right after the
 * request is sent, and after the first bytes of the answer. The gateway is a real child process: an
 * unhandled 'error' event would end it, which the test sees as the child's exit.
 *
 * The refusals the gateway writes by hand are all here: WebSocket upgrades refused 404 (another path),
 * 403 (a session cookie from another Origin) and 429 (over the per-IP WebSocket cap), and connections
 * over the per-IP connection cap (429 before any request is read).
 */
const WS_CAP = 2;
const CONNECTION_CAP = 24;

let gateway: GatewayProcess;
let account: TestAccount;
let exited: string | undefined;
/** The case being run, named in the failure if the process exits. */
let current = 'start';
const answers = new Map<string, string>();

interface Target {
  name: string;
  /** Request line and headers, up to and including the blank line. */
  head: string;
  body?: string;
  /** After the handshake of an accepted WebSocket: a frame the client sends (half of it, mid-request). */
  frame?: Buffer;
  /** How the answer starts, checked on the connection reset after the first bytes. */
  expect: RegExp;
}

type Moment = 'at once' | 'mid-headers' | 'mid-body' | 'after request' | 'after first bytes' | 'mid-frame' | 'after frame answer';

function get(path: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries({ Host: '127.0.0.1', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

function post(path: string, body: string, headers: Record<string, string> = {}): Pick<Target, 'head' | 'body'> {
  const all = { Host: '127.0.0.1', 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers };
  return { head: `POST ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, body };
}

function upgrade(path: string, headers: Record<string, string> = {}): string {
  return get(path, {
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Protocol': 'graphql-transport-ws',
    ...headers,
  });
}

/** A masked client text frame (RFC 6455), as a browser sends. */
function wsFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const len = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81]), len, mask, masked]);
}

function halves(data: string | Buffer): [Buffer, Buffer] {
  const b = Buffer.from(data);
  const at = Math.max(1, Math.floor(b.length / 2));
  return [b.subarray(0, at), b.subarray(at)];
}

/** Writes and resolves once the kernel has the bytes. */
function send(socket: net.Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => socket.write(data, () => resolve()));
}

/** Resolves with the first bytes the server sends (or '' when it closes first). */
function firstBytes(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
    socket.once('close', () => resolve(''));
  });
}

/** Bytes until `pattern` matches what arrived (or the server closes). */
function readUntil(socket: net.Socket, pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (pattern.test(seen)) {
        socket.off('data', onData);
        resolve(seen);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(seen));
  });
}

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(gateway.port, '127.0.0.1');
    // The client side's own errors (the server closed first) are of no interest.
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends an RST (SO_LINGER 0) and waits until the socket is gone on this side. */
async function reset(socket: net.Socket): Promise<void> {
  if (socket.destroyed) return;
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.resetAndDestroy();
  await closed;
}

/** Opens a connection to `t`, resets it at `moment`; resolves with what the server had sent, if asked. */
async function resetAt(t: Target, moment: Moment): Promise<string | undefined> {
  const socket = await connect();
  let seen: string | undefined;
  const request = Buffer.concat([Buffer.from(t.head), Buffer.from(t.body ?? '')]);
  switch (moment) {
    case 'at once':
      break;
    case 'mid-headers':
      await send(socket, halves(t.head)[0]);
      break;
    case 'mid-body':
      await send(socket, Buffer.concat([Buffer.from(t.head), halves(t.body!)[0]]));
      break;
    case 'after request':
      await send(socket, request);
      break;
    case 'after first bytes': {
      const first = firstBytes(socket);
      await send(socket, request);
      seen = await first;
      break;
    }
    case 'mid-frame':
    case 'after frame answer': {
      const handshake = readUntil(socket, /\r\n\r\n/);
      await send(socket, request);
      expect(await handshake, `${t.name}: handshake`).toMatch(/^HTTP\/1\.1 101 /);
      if (moment === 'mid-frame') {
        await send(socket, halves(t.frame!)[0]);
      } else {
        const answer = firstBytes(socket);
        await send(socket, t.frame!);
        seen = await answer;
      }
      break;
    }
  }
  await reset(socket);
  return seen;
}

/** GET /healthz on a fresh connection: the process is there and serving. */
async function healthz(): Promise<number> {
  return (await fetch(`${gateway.url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status;
}

async function resetEverywhere(targets: Target[]): Promise<void> {
  for (const t of targets) {
    const moments: Moment[] = ['at once', 'mid-headers', 'after request', 'after first bytes'];
    if (t.body) moments.push('mid-body');
    if (t.frame) moments.push('mid-frame', 'after frame answer');
    for (const moment of moments) {
      current = `${t.name}, reset ${moment}`;
      const seen = await resetAt(t, moment);
      if (moment === 'after first bytes') {
        answers.set(t.name, seen ?? '');
        expect(seen, `${t.name}: the answer before the reset`).toMatch(t.expect);
      }
      if (moment === 'after frame answer') expect(seen, `${t.name}: the frame's answer`).toMatch(/connection_ack/);
      // After each case, the process still answers: a death is pinned on the case that caused it.
      expect(await healthz().catch((err: unknown) => `${String(err)} (exited: ${exited ?? 'no'})`), current).toBe(200);
    }
  }
}

/**
 * A static asset the HTML at `path` points to (its first script or stylesheet). The dashboard's exist
 * once `npm run build` has run (CI builds before the fault suite); without them the case is left out,
 * saying so.
 */
async function assetTarget(path: string): Promise<Target[]> {
  const res = await fetch(`${gateway.url}${path}`);
  const html = await res.text();
  const found = /(?:src|href)="(\/[^"]+\.(?:js|css)(?:\?[^"]*)?)"/.exec(html)?.[1];
  if (found) return [{ name: `${path} asset`, head: get(found), expect: /^HTTP\/1\.1 200 / }];
  console.warn(`\n\n*** socket resets: NO ASSET CASE FOR ${path}: it answered ${res.status} "${html.slice(0, 120).trim()}" (run \`npm run build\`) ***\n\n`);
  return [];
}

let targets: Target[];

beforeAll(async () => {
  gateway = await spawnGateway('', { DATA_DIR: '', WS_MAX_CONNECTIONS_PER_IP: String(WS_CAP), HTTP_MAX_CONNECTIONS_PER_IP: String(CONNECTION_CAP) });
  gateway.child.once('exit', (code, signal) => {
    exited = `exit ${code ?? signal} during "${current}":\n${gateway.output().slice(-3_000)}`;
  });
  account = await createAccount(gateway.url, 'socket resets');
  const intent = await createPayment(account.api, { amount: 5_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000001' } });
  const link = await ok(account.api.post('/payment_links', { amount: 4_000 }), 201, 'payment link');
  const session = await ok(account.api.post('/checkout/sessions', { amount: 4_000 }), 201, 'checkout session');
  const key = { Authorization: `Bearer ${account.sk}` };
  const graphql = JSON.stringify({ query: '{ paymentIntents(first: 2) { edges { node { id status } } } }' });
  const intentBody = JSON.stringify({ amount: 1_000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000002' } });
  const init = wsFrame(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${account.sk}` } }));
  targets = [
    { name: 'REST with key', head: get('/v1/payment_intents?limit=2', key), expect: /^HTTP\/1\.1 200 / },
    { name: 'REST without key', head: get('/v1/payment_intents'), expect: /^HTTP\/1\.1 401 / },
    { name: 'REST POST with key', ...post('/v1/payment_intents', intentBody, { ...key, 'Idempotency-Key': 'socket-resets-1' }), expect: /^HTTP\/1\.1 201 / },
    { name: 'REST POST without key', ...post('/v1/payment_intents', intentBody), expect: /^HTTP\/1\.1 401 / },
    { name: 'SSE payment stream', head: get(`/v1/payment_intents/${intent.id}/events`, key), expect: /^HTTP\/1\.1 200 [\s\S]*text\/event-stream/ },
    { name: 'SSE stream without key', head: get(`/v1/payment_intents/${intent.id}/events`), expect: /^HTTP\/1\.1 401 / },
    { name: 'GraphQL over HTTP', ...post('/graphql', graphql, key), expect: /^HTTP\/1\.1 200 / },
    { name: 'GraphQL over HTTP without key', ...post('/graphql', graphql), expect: /^HTTP\/1\.1 401 / },
    { name: 'WebSocket accepted', head: upgrade('/graphql'), frame: init, expect: /^HTTP\/1\.1 101 / },
    { name: 'WebSocket refused 404 (other path)', head: upgrade('/not-graphql'), expect: /^HTTP\/1\.1 404 / },
    {
      name: 'WebSocket refused 403 (session cookie from another Origin)',
      head: upgrade('/graphql', { Cookie: 'pgw_session=whatever', Origin: 'http://elsewhere.example' }),
      expect: /^HTTP\/1\.1 403 [\s\S]*permission_denied/,
    },
    // 503 when the dashboard app is not built: a route all the same.
    { name: 'dashboard', head: get('/dashboard'), expect: /^HTTP\/1\.1 (200|503) / },
    ...(await assetTarget('/dashboard')),
    { name: 'docs', head: get('/docs'), expect: /^HTTP\/1\.1 200 / },
    ...(await assetTarget('/docs')),
    { name: 'public payment page', head: get(`/pay/${link.code}`), expect: /^HTTP\/1\.1 200 / },
    { name: 'public checkout page', head: get(`/checkout/${session.id}`), expect: /^HTTP\/1\.1 200 / },
    { name: 'public payment link JSON', head: get(`/v1/public/payment_links/${link.code}`), expect: /^HTTP\/1\.1 200 / },
    { name: 'metrics', head: get('/metrics'), expect: /^HTTP\/1\.1 200 / },
    { name: 'healthz', head: get('/healthz'), expect: /^HTTP\/1\.1 200 / },
  ];
}, 120_000);

afterAll(async () => {
  console.log(`socket resets: first answers seen: ${[...answers].map(([name, a]) => `${name}: ${a.split('\r\n')[0]}`).join('; ')}`);
  await gateway?.stop();
});

describe('socket resets', () => {
  it('resets connections to every route family at every moment, and the process lives and serves', async () => {
    await resetEverywhere(targets);
    expect(exited).toBeUndefined();
  });

  it('resets upgrades refused over the per-IP WebSocket cap', async () => {
    // Hold the cap: sockets past the handshake, each holding a place until it closes.
    const holders: net.Socket[] = [];
    await waitFor(
      async () => {
        const socket = await connect();
        const handshake = readUntil(socket, /\r\n\r\n/);
        await send(socket, upgrade('/graphql'));
        if (/^HTTP\/1\.1 101 /.test(await handshake)) holders.push(socket);
        else socket.destroy();
        return holders.length;
      },
      (n) => n >= WS_CAP,
    );
    try {
      await resetEverywhere([{ name: 'WebSocket refused 429 (over the per-IP cap)', head: upgrade('/graphql'), expect: /^HTTP\/1\.1 429 [\s\S]*rate_limit_exceeded/ }]);
    } finally {
      for (const s of holders) s.destroy();
    }
    expect(exited).toBeUndefined();
  });

  it('resets connections refused over the per-IP connection cap', async () => {
    // Hold the cap with idle keep-alive connections, each proven counted by an answer on it, until
    // the next one is refused.
    const holders: net.Socket[] = [];
    let refused = '';
    while (!refused.startsWith('HTTP/1.1 429')) {
      const socket = await connect();
      const answer = readUntil(socket, /\r\n\r\n[\s\S]*\}|^HTTP\/1\.1 429 /);
      await send(socket, get('/healthz'));
      const got = await answer;
      if (got.startsWith('HTTP/1.1 429')) refused = got;
      else holders.push(socket);
      expect(holders.length, 'connections held before the cap refused one').toBeLessThanOrEqual(CONNECTION_CAP);
    }
    try {
      for (const moment of ['at once', 'mid-headers', 'after request', 'after first bytes'] as const) {
        current = `connection over the cap, reset ${moment}`;
        const seen = await resetAt({ name: 'over the connection cap', head: get('/healthz'), expect: /^HTTP\/1\.1 429 / }, moment);
        if (moment === 'after first bytes') expect(seen).toMatch(/^HTTP\/1\.1 429 [\s\S]*rate_limit_exceeded/);
      }
    } finally {
      for (const s of holders) s.destroy();
    }
    // Places free as the holders' sockets close on the server: serving again then.
    current = 'after the connection cap';
    await waitFor(() => healthz().catch(() => 0), (s) => s === 200);
    expect(exited).toBeUndefined();
  });

  it('still answers /healthz and a keyed REST request after all of it', async () => {
    expect(exited).toBeUndefined();
    expect(gateway.alive()).toBe(true);
    expect(await healthz()).toBe(200);
    const list = await account.api.get('/payment_intents?limit=1');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
  });
});
