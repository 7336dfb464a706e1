import { readdirSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { GatewayEvent } from '../eventSocket';

/**
 * How `pgw resend` reaches a running `pgw listen`: each listener serves a Unix socket in the config dir
 * (0700, so only the user's own processes reach it), named by gateway and account (listenFiles), and
 * `resend` asks every socket of its gateway and account to forward one event. One JSON line each way:
 * `{"resend": <Event>}` in, `ResendAnswer` out. The gateway itself knows nothing of listeners.
 */
export interface ResendAnswer {
  forward_to: string;
  status: number;
  latency_ms: number;
  attempts: number;
  error?: string;
}

/** Unix socket paths are limited (104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 100;
const ASK_TIMEOUT_MS = 120_000;

/**
 * Serves resend requests on `file` until the process exits. Returns a note when it cannot (path too long,
 * Windows, another listen for the same URL already serving), for the caller to print: listening goes on.
 */
export async function serveResends(file: string, handle: (event: GatewayEvent) => Promise<ResendAnswer>): Promise<string | null> {
  if (process.platform === 'win32') return 'pgw resend cannot reach listeners on Windows (no Unix socket)';
  if (file.length > MAX_SOCKET_PATH) return `pgw resend cannot reach this listener: its socket path is longer than ${MAX_SOCKET_PATH} bytes (${file})`;
  if ((await ask(file, null)) !== 'stale') return 'another pgw listen serves resends for this account and URL: pgw resend reaches that one';
  try {
    unlinkSync(file);
  } catch {
    // Not there: nothing to clear.
  }
  const server = net.createServer((socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      const line = buffered.slice(0, newline);
      buffered = '';
      let event: GatewayEvent | null = null;
      try {
        const request = JSON.parse(line) as { resend?: GatewayEvent };
        if (request.resend && typeof request.resend.id === 'string') event = request.resend;
      } catch {
        // Not JSON: answered below.
      }
      if (!event) return void socket.end(`${JSON.stringify({ error: 'expected {"resend": <event>}' })}\n`);
      void handle(event).then((answer) => socket.end(`${JSON.stringify(answer)}\n`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  server.unref();
  process.on('exit', () => {
    try {
      unlinkSync(file);
    } catch {
      // Already gone.
    }
  });
  return null;
}

/** The sockets of the running listeners of one gateway and account (file names start with `prefix`). */
export function listenerSockets(dir: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(prefix) && n.endsWith('.sock')).map((n) => path.join(dir, n));
}

/**
 * Asks the listener on `file` to forward `event` (null: only checks that someone answers). 'stale' when
 * no process serves the socket any more (a listener killed without cleaning up).
 */
export function ask(file: string, event: GatewayEvent | null): Promise<ResendAnswer | 'stale' | 'alive'> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(ASK_TIMEOUT_MS, () => socket.destroy(new Error('timeout')));
    socket.on('connect', () => {
      if (event === null) {
        socket.destroy();
        resolve('alive');
      } else {
        socket.write(`${JSON.stringify({ resend: event })}\n`);
      }
    });
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => resolve('stale'));
    socket.on('close', () => {
      try {
        resolve(JSON.parse(answer) as ResendAnswer);
      } catch {
        resolve('stale');
      }
    });
  });
}

