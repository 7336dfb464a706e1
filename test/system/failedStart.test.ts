// A gateway whose start fails leaves nothing open: the services that started stop again
// (src/platform/lifecycle.ts startServices), the port closes, the database too, and the error reaches
// the caller. Here the outbox sweeper refuses to start, after the services before it have started.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../support/server';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a gateway whose services fail to start', () => {
  it('rejects with the failure and leaves its port closed, so a gateway can start on it at once', async () => {
    const port = await freePort();
    const failing = startTestServer({ PORT: String(port), HOST: '127.0.0.1' }, {
      register: (runtime) => {
        runtime.outboxes.startSweeper = () => {
          throw new Error('the sweeper cannot start');
        };
      },
    });
    await expect(failing).rejects.toThrow('the sweeper cannot start');
    const refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => 'answered',
      (err: Error & { cause?: { code?: string } }) => err.cause?.code,
    );
    expect(refused).toBe('ECONNREFUSED');
    const next = await startTestServer({ PORT: String(port), HOST: '127.0.0.1' });
    try {
      expect((await fetch(`${next.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await next.stop();
    }
  });
});
