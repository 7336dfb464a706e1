import { createRequire } from 'node:module';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The driver's own connection class (internal, untyped), patched by patches/mongodb+7.8.0.patch, which
// `npm install` applies (postinstall: patch-package).
interface DriverConnection {
  command(ns: unknown, cmd: object, options: object): Promise<unknown>;
  closed: boolean;
}
const require = createRequire(import.meta.url);
const { Connection } = require('mongodb/lib/cmap/connection.js') as { Connection: new (socket: net.Socket, options: object) => DriverConnection };
const { ns } = require('mongodb/lib/utils.js') as { ns: (namespace: string) => unknown };

/**
 * A command written on a connection whose socket was destroyed but has not yet emitted 'close' (the
 * peer closed it; Node emits 'close' a tick later). Node takes such a write silently: it returns false
 * and emits neither 'drain' nor 'error', and the unpatched driver waited for 'drain' for ever. Seen in
 * test/faults/databaseOutage.fault.ts as a rate-limit count and a server monitor's check that never
 * settled after the engine was SIGKILLed: the gateway then never served again. With the patch the
 * command fails at once as a closed connection (MongoNetworkError), which the driver and the gateway
 * treat as the database unavailable.
 */
describe('the MongoDB driver, patched: a command on a destroyed socket', () => {
  let server: net.Server;
  let port: number;
  beforeAll(async () => {
    server = net.createServer((s) => s.on('error', () => undefined));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('fails at once as a closed connection instead of waiting for a drain that never comes', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const connection = new Connection(socket, { id: 1, generation: 0, hostAddress: { toString: () => `127.0.0.1:${port}` } });
    socket.destroy(); // destroyed now; 'close' comes a tick later
    expect(socket.destroyed).toBe(true);
    const outcome = await Promise.race([
      connection.command(ns('admin.$cmd'), { ping: 1 }, {}).then(
        () => 'answered',
        (err: { name?: string }) => err.name,
      ),
      new Promise((r) => setTimeout(() => r('still pending after 2 s'), 2_000)),
    ]);
    expect(outcome).toBe('MongoNetworkError');
    expect(connection.closed).toBe(true);
  });
});
