import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { usePgwGateway, useReceiver } from './support/gateway';
import { runPgw } from './support/pgw';

/** A TCP proxy in front of the gateway that a test can cut (every connection reset, none accepted) and restore. */
async function startProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await open();
  return {
    url: () => `http://127.0.0.1:${port}`,
    async cut() {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const s of sockets) s.resetAndDestroy();
      });
    },
    restore: open,
  };
}

const gw = usePgwGateway();
const receiverOf = useReceiver();

describe('pgw listen across a dropped connection', () => {
  it('reconnects and forwards the events made while the connection was down, once each, in order', async () => {
    const receiver = receiverOf();
    const account = await createAccount(gw.baseUrl);
    const proxy = await startProxy(new URL(gw.baseUrl));
    const listener = gw.start(['listen', '--forward-to', receiver.url, '--api-key', account.sk, '--base-url', proxy.url()]);
    await listener.line(() => true);
    const direct = ['--api-key', account.sk, '--base-url', gw.baseUrl, '--json'];

    const before = JSON.parse((await runPgw(['trigger', 'express.succeeded', ...direct], gw.config.env)).stdout);
    await receiver.until((r) => r.some((d) => d.event.type === 'payment.succeeded' && d.event.data.id === before.id));

    await proxy.cut();
    // The drop names the URL it lost; the reconnection is said too, with what it caught up.
    const ws = `${proxy.url().replace('http:', 'ws:')}/graphql`;
    expect(await listener.errLine((l) => l.includes('reconnecting'))).toContain(ws);
    const during = JSON.parse((await runPgw(['trigger', 'express.rejected', ...direct], gw.config.env)).stdout);
    expect(receiver.received.some((d) => d.event.data.id === during.id)).toBe(false);

    await proxy.restore();
    await receiver.until((r) => r.some((d) => d.event.type === 'payment.failed' && d.event.data.id === during.id));
    expect(await listener.errLine((l) => l.startsWith('reconnected to'))).toMatch(new RegExp(`^reconnected to ${ws}; caught up [1-9]\\d* events? missed meanwhile$`));
    const after = JSON.parse((await runPgw(['trigger', 'express.succeeded', ...direct], gw.config.env)).stdout);
    await receiver.until((r) => r.some((d) => d.event.type === 'payment.succeeded' && d.event.data.id === after.id));

    const forwarded = receiver.received.map((d) => d.event.id);
    const listed = await account.api.get('/events?limit=100');
    expect(forwarded).toEqual(listed.body.data.map((e: { id: string }) => e.id).reverse());
  }, 120_000); // several spawned CLIs on a loaded 2-core machine: a bound on a hang, not a timing check
});
