/**
 * Server speaking the MongoDB wire protocol over TCP, over a Unix domain socket (like mongod's
 * /tmp/mongodb-<port>.sock), or both. Each connection frames messages itself and
 * handles them one at a time, in order (the driver never pipelines on a pooled connection).
 * A protocol violation (bad length, truncated or malformed message, bad BSON, unknown opcode)
 * closes only the offending connection; nothing a client sends can take the process down.
 */
import fs from 'node:fs';
import net from 'node:net';
import { ObjectId } from 'bson';
import { runCommand } from './commands';
import { MAX_MESSAGE_BYTES } from './commands/admin';
import type { ServerInfo } from './commands/context';
import type { Engine } from './engine';
import { errorReply } from './errors';
import { SocketListenError } from './socketListenError';
import type { Doc } from './values';
import {
  FLAG_MORE_TO_COME,
  HEADER_BYTES,
  WireError,
  encodeOpMsg,
  encodeOpReply,
  parseMessage,
  readHeader,
} from './wire';

export { SocketListenError };

export interface ServerOptions {
  /**
   * Interface and port of the TCP listener; omitted = no TCP listener at all (then `socketPath` is
   * required): the gateway's in-process engine, which nobody but its own process may reach.
   */
  tcp?: { host: string; port: number };
  /** host:port advertised in hello (hosts/primary/me) to TCP clients. */
  advertise?: string;
  setName?: string;
  /**
   * Also listen on this Unix domain socket path (the driver recognises hosts ending in `.sock`).
   * A stale file left by a crashed process is replaced; a path another live server listens on
   * is an error (EADDRINUSE). The file is made owner-only (0600) and removed on close. It exists
   * for a moment with the umask's mode before that chmod: a caller that must exclude every other
   * user puts it in a directory only it can enter (index.ts does for `socketPath: true`).
   */
  socketPath?: string;
}

export class WireServer {
  private server: net.Server | undefined;
  private socketServer: net.Server | undefined;
  private connections = new Set<Connection>();
  private sleepers = new Set<() => void>();
  private nextConnectionId = 1;
  private closing = false;
  readonly processId = new ObjectId();
  hostPort = '';
  /** The TCP port, once listening; undefined without a TCP listener. */
  port: number | undefined;

  constructor(
    readonly engine: Engine,
    private readonly options: ServerOptions,
  ) {
    if (!options.tcp && options.socketPath === undefined) throw new Error('embedded db: neither a TCP port nor a Unix socket to listen on');
  }

  /** The Unix socket path, once listening on it. */
  get socketPath(): string | undefined {
    return this.socketServer ? this.options.socketPath : undefined;
  }

  async listen(): Promise<void> {
    const tcp = this.options.tcp;
    if (tcp) {
      const server = net.createServer((socket) => this.accept(socket, false));
      server.on('error', (e) => this.engine.logger('embedded db: server error', { error: String(e) }));
      await listenOn(server, (s) => s.listen(tcp.port, tcp.host));
      this.server = server;
      this.port = (server.address() as net.AddressInfo).port;
      const host = ['0.0.0.0', '::', ''].includes(tcp.host) ? '127.0.0.1' : tcp.host;
      this.hostPort = this.options.advertise ?? `${host.includes(':') ? `[${host}]` : host}:${this.port}`;
    }
    const socketPath = this.options.socketPath;
    if (socketPath === undefined) return;
    if (!tcp) this.hostPort = socketPath;
    try {
      await removeStaleSocket(socketPath);
      const server = net.createServer((socket) => this.accept(socket, true));
      await listenOn(server, (s) => s.listen(socketPath));
      server.on('error', (e) => this.engine.logger('embedded db: socket server error', { error: String(e) }));
      this.socketServer = server;
      fs.chmodSync(socketPath, 0o600);
    } catch (e) {
      await this.close();
      throw new SocketListenError(socketPath, e);
    }
  }

  private accept(socket: net.Socket, viaUnixSocket: boolean): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (!viaUnixSocket) socket.setNoDelay(true);
    const conn = new Connection(this, socket, this.nextConnectionId++, viaUnixSocket);
    this.connections.add(conn);
    socket.on('close', () => {
      this.connections.delete(conn);
      if (!this.closing) this.engine.txns.connectionClosed(conn.id);
    });
  }

  info(connectionId: number, viaUnixSocket: boolean): ServerInfo {
    return {
      // A client that came over the socket is told the socket path is the member's address, so
      // a `?replicaSet=rs0` URI naming the socket finds its primary there (not over TCP).
      hostPort: viaUnixSocket ? this.options.socketPath! : this.hostPort,
      setName: this.options.setName ?? 'rs0',
      processId: this.processId,
      connectionId,
      sleep: (ms) => this.sleep(ms),
    };
  }

  /** A cancellable delay: close() wakes every sleeper so shutdown is never held up. */
  private sleep(ms: number): Promise<void> {
    if (this.closing) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  get isClosing(): boolean {
    return this.closing;
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const s of [...this.sleepers]) s();
    this.engine.changes.wakeAll();
    const closed = [this.server, this.socketServer].map((s) => new Promise<void>((r) => (s?.listening ? s.close(() => r()) : r())));
    for (const c of this.connections) c.destroy();
    await Promise.all(closed); // closing a listening Unix socket server unlinks its file
  }
}

function listenOn(server: net.Server, listen: (s: net.Server) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve();
    });
    listen(server);
  });
}

/**
 * A socket file nobody listens on any more (its process crashed) would make listen() fail with
 * EADDRINUSE: remove it, as mongod does. A live one is left alone and listen() reports the clash.
 * Anything that is not a socket is never deleted.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (!stat.isSocket()) throw new Error(`${socketPath} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code !== 'ECONNREFUSED'));
  });
  if (!live) fs.rmSync(socketPath, { force: true }); // otherwise listen() reports EADDRINUSE
}

class Connection {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = -1;
  private queue: Promise<void> = Promise.resolve();
  private dead = false;
  private readonly info: ServerInfo;

  constructor(
    private readonly server: WireServer,
    private readonly socket: net.Socket,
    readonly id: number,
    viaUnixSocket: boolean,
  ) {
    this.info = server.info(id, viaUnixSocket);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => this.destroy());
    socket.on('end', () => {
      if (this.buffered > 0) this.fail('connection ended in the middle of a message');
      else socket.end();
    });
  }

  destroy(): void {
    this.dead = true;
    this.chunks = [];
    this.buffered = 0;
    this.socket.destroy();
  }

  /**
   * Logs and closes this connection. When the offending message was complete (so we know its
   * requestID) the client first gets an error reply saying why.
   */
  private fail(reason: string, requestId?: number): void {
    if (this.dead) return;
    this.server.engine.logger('embedded db: closing connection after protocol error', {
      connectionId: this.id,
      remote: this.socket.remoteAddress ? `${this.socket.remoteAddress}:${this.socket.remotePort}` : 'unix socket',
      reason,
    });
    if (requestId === undefined) {
      this.destroy();
      return;
    }
    this.dead = true;
    this.chunks = [];
    this.buffered = 0;
    const reply = encodeOpMsg(requestId, { ok: 0, errmsg: `malformed message: ${reason}`, code: 22, codeName: 'InvalidBSON' });
    this.socket.end(reply, () => this.socket.destroy());
    setTimeout(() => this.socket.destroy(), 1000).unref(); // in case the peer never reads
  }

  private onData(chunk: Buffer): void {
    if (this.dead) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < 4) return;
        if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
        const len = this.chunks[0]!.readInt32LE(0);
        if (len < HEADER_BYTES || len > MAX_MESSAGE_BYTES) {
          this.fail(`invalid message length ${len}`);
          return;
        }
        this.expected = len;
      }
      if (this.buffered < this.expected) return;
      // Only join chunks once a whole message is here (no quadratic copying of big messages).
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      const msg = all.subarray(0, this.expected);
      const rest = all.subarray(this.expected);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.expected = -1;
      this.queue = this.queue
        .then(() => this.handle(msg))
        .catch((e: unknown) => this.fail(`internal error: ${String(e)}`)); // never an unhandled rejection
    }
  }

  private async handle(buf: Buffer): Promise<void> {
    if (this.dead) return;
    let msg;
    try {
      msg = parseMessage(buf);
    } catch (e) {
      this.fail(e instanceof WireError ? e.message : `unparseable message: ${String(e)}`, buf.readInt32LE(4));
      return;
    }
    const engine = this.server.engine;
    try {
      if (msg.op === 'query') {
        let reply: Doc;
        if (!msg.collection.endsWith('.$cmd')) {
          reply = { ok: 0, errmsg: 'OP_QUERY is only supported for commands', code: 352, codeName: 'UnsupportedOpQueryCommand' };
        } else {
          const db = msg.collection.slice(0, -'.$cmd'.length);
          reply = await runCommand(engine, db, msg.query, this.info);
        }
        this.write(encodeOpReply(msg.header.requestId, reply));
        return;
      }
      const body = msg.body;
      const db = typeof body.$db === 'string' ? body.$db : 'admin';
      const reply = await runCommand(engine, db, body, this.info);
      // moreToCome from the client (w:0 writes): the client does not read a reply.
      if (msg.flags & FLAG_MORE_TO_COME) return;
      this.write(encodeOpMsg(msg.header.requestId, reply));
    } catch (e) {
      // Reply encoding problems (e.g. a result over 16 MB) are the command's error, not fatal.
      try {
        this.write(encodeOpMsg(msg.header.requestId, errorReply(e)));
      } catch {
        this.fail(`could not reply: ${String(e)}`);
      }
    }
  }

  private write(buf: Buffer): void {
    if (!this.dead && !this.socket.destroyed) this.socket.write(buf);
  }
}

export { readHeader };
