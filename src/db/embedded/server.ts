/**
 * TCP server speaking the MongoDB wire protocol. Each connection frames messages itself and
 * handles them one at a time, in order (the driver never pipelines on a pooled connection).
 * A protocol violation (bad length, truncated or malformed message, bad BSON, unknown opcode)
 * closes only the offending connection; nothing a client sends can take the process down.
 */
import net from 'node:net';
import { ObjectId } from 'bson';
import { runCommand } from './commands';
import { MAX_MESSAGE_BYTES } from './commands/admin';
import type { ServerInfo } from './commands/context';
import type { Engine } from './engine';
import { errorReply } from './errors';
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

export interface ServerOptions {
  host: string;
  port: number;
  /** host:port advertised in hello (hosts/primary/me). */
  advertise?: string;
  setName?: string;
}

export class WireServer {
  private server: net.Server;
  private connections = new Set<Connection>();
  private sleepers = new Set<() => void>();
  private nextConnectionId = 1;
  private closing = false;
  readonly processId = new ObjectId();
  hostPort = '';
  port = 0;

  constructor(
    readonly engine: Engine,
    private readonly options: ServerOptions,
  ) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.on('error', (e) => engine.logger('embedded db: server error', { error: String(e) }));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.server.once('error', onError);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    const addr = this.server.address() as net.AddressInfo;
    this.port = addr.port;
    const host = ['0.0.0.0', '::', ''].includes(this.options.host) ? '127.0.0.1' : this.options.host;
    this.hostPort = this.options.advertise ?? `${host.includes(':') ? `[${host}]` : host}:${this.port}`;
  }

  private accept(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const conn = new Connection(this, socket, this.nextConnectionId++);
    this.connections.add(conn);
    socket.on('close', () => {
      this.connections.delete(conn);
      if (!this.closing) this.engine.txns.connectionClosed(conn.id);
    });
  }

  info(connectionId: number): ServerInfo {
    return {
      hostPort: this.hostPort,
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
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    for (const c of this.connections) c.destroy();
    await closed;
  }
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
  ) {
    this.info = server.info(id);
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
      remote: `${this.socket.remoteAddress}:${this.socket.remotePort}`,
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
