import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Receivers that misbehave, on loopback, watched from their side of the socket:
 * - `silent`: accepts the TCP connection and never answers (a blackhole that completed the handshake);
 * - `stalling`: answers the status line and headers with 200, writes a first chunk, never ends the body;
 * - `gated`: holds every request until `open()` (or for GATE_MAX_HOLD_MS, well within the gateway's
 *   5 s deadline, so a held attempt never fails), then answers 200, and at once from then on.
 * `opened` and `closed` count connections as the server sees them, so a test can tell whether the
 * gateway let go of a socket.
 */
export interface HangingReceiver {
  url: string;
  /** Connections accepted so far. */
  opened: number;
  /** Connections that have closed (either side). */
  closed: number;
  /** Requests whose headers arrived (http kinds only). */
  requests: number;
  /** How many requests each (event id, path) got (http kinds only). */
  perDelivery: Map<string, number>;
  /** Resolves once `closed` reaches `count`. */
  waitClosed(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once `opened` reaches `count`. */
  waitOpened(count: number, timeoutMs?: number): Promise<void>;
  /** `gated` only: answers the held requests and every later one. */
  open(): void;
  close(): Promise<void>;
}

type Kind = 'silent' | 'stalling' | 'gated';

const GATE_MAX_HOLD_MS = 2_500;

export async function startHangingReceiver(kind: Kind): Promise<HangingReceiver> {
  const sockets = new Set<net.Socket>();
  const listeners: Array<() => void> = [];
  const held = new Set<http.ServerResponse>();
  let gateOpen = false;
  const notify = () => {
    for (const l of listeners.splice(0)) l();
  };
  const answer = (res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  };
  const server: net.Server =
    kind === 'silent'
      ? // Reads (and drops) what arrives: a socket nobody reads never notices the peer's FIN.
        net.createServer((socket) => socket.resume())
      : http.createServer((req, res) => {
          r.requests++;
          const delivery = `${String(req.headers['service-event-id'])} ${req.url ?? ''}`;
          r.perDelivery.set(delivery, (r.perDelivery.get(delivery) ?? 0) + 1);
          notify();
          req.resume();
          req.on('end', () => {
            if (kind === 'stalling') {
              res.writeHead(200, { 'content-type': 'text/plain' });
              res.write('partial');
            } else if (gateOpen) answer(res);
            else {
              held.add(res);
              setTimeout(() => {
                if (held.delete(res)) answer(res);
              }, GATE_MAX_HOLD_MS).unref();
            }
          });
        });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    r.opened++;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      r.closed++;
      notify();
    });
    notify();
  });
  const until = (done: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${kind} receiver: ${what} not reached within ${timeoutMs} ms (opened ${r.opened}, closed ${r.closed})`)), timeoutMs);
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          resolve();
        } else listeners.push(check);
      };
      check();
    });
  const r: HangingReceiver = {
    url: '',
    opened: 0,
    closed: 0,
    requests: 0,
    perDelivery: new Map(),
    waitClosed: (count, timeoutMs = 30_000) => until(() => r.closed >= count, `${count} closed`, timeoutMs),
    waitOpened: (count, timeoutMs = 30_000) => until(() => r.opened >= count, `${count} opened`, timeoutMs),
    open() {
      gateOpen = true;
      for (const res of held) answer(res);
      held.clear();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
