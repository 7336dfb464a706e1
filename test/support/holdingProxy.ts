import net from 'node:net';

/**
 * A TCP proxy in front of a real database that can hold what clients send: while held, their bytes
 * wait in the proxy (in order) and the database sees nothing, so every command sent meanwhile waits
 * for its answer, as on a database that has stopped answering; `release` sends them on. Answers
 * already under way still flow back. A slow database made real, not a mocked one.
 */
export class HoldingProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private waiting: Array<{ to: net.Socket; chunk: Buffer }> | null = null;
  port = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = connectUpstream(client, this.targetPort, this.sockets);
      client.on('data', (chunk: Buffer) => (this.waiting ? this.waiting.push({ to: upstream, chunk }) : upstream.write(chunk)));
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  hold(): void {
    this.waiting ??= [];
  }

  release(): void {
    const waiting = this.waiting ?? [];
    this.waiting = null;
    for (const { to, chunk } of waiting) to.write(chunk);
  }

  async stop(): Promise<void> {
    this.release();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * A proxy's connection to `targetPort` for `client`: both sockets kept in `open` while open, each
 * closed with the other, their errors (the resets a test causes) ignored. The caller wires the bytes.
 */
export function connectUpstream(client: net.Socket, targetPort: number, open: Set<net.Socket>): net.Socket {
  const upstream = net.connect(targetPort, '127.0.0.1');
  for (const s of [client, upstream]) {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => undefined);
  }
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  return upstream;
}
