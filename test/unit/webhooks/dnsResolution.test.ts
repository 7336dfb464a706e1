import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveWebhookTarget, TargetRefusedError, type WebhookTargetPolicy } from '../../../src/domain/webhooks/targetResolver';

/**
 * Webhook host names are resolved by c-ares against a name server (here a local one on UDP), with a
 * timeout, and every address of both families must pass the private-network policy.
 */
type Records = { a?: string[]; aaaa?: string[]; silent?: boolean };
const zone = new Map<string, Records>();
let server: dgram.Socket;
let port = 0;
/** The strict policy, resolving through the local name server below (set once it listens). */
let strict: WebhookTargetPolicy;
const asked: string[] = [];

/** The question's name and type, read from a DNS query (RFC 1035 4.1). */
function question(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let i = 12;
  while (msg[i]! > 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString('ascii'));
    i += msg[i]! + 1;
  }
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(i + 1), end: i + 5 };
}

function answer(msg: Buffer): Buffer | null {
  const q = question(msg);
  asked.push(`${q.name}/${q.type}`);
  const records = zone.get(q.name);
  if (records?.silent) return null;
  const addresses = (q.type === 1 ? records?.a : q.type === 28 ? records?.aaaa : undefined) ?? [];
  const rdata = addresses.map((a) => (q.type === 1 ? Buffer.from(a.split('.').map(Number)) : ipv6Bytes(a)));
  const header = Buffer.alloc(12);
  msg.copy(header, 0, 0, 2); // id
  header.writeUInt16BE(records ? 0x8180 : 0x8183, 2); // response, recursion; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(rdata.length, 6);
  const rrs = rdata.map((data) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // name: pointer to the question
    rr.writeUInt16BE(q.type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, msg.subarray(12, q.end), ...rrs]);
}

function ipv6Bytes(a: string): Buffer {
  const [head, tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

beforeAll(async () => {
  server = dgram.createSocket('udp4');
  server.on('message', (msg, from) => {
    const reply = answer(msg);
    if (reply) server.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
  strict = { allowPrivateNetworks: false, dnsServers: [`127.0.0.1:${port}`] };
});
afterEach(() => {
  zone.clear();
});
afterAll(() => {
  server.close();
});

describe('webhook host resolution (c-ares, with a timeout)', () => {
  it('resolves A records from the name server and pins the address', async () => {
    zone.set('shop.example', { a: ['93.184.216.34'] });
    const target = await resolveWebhookTarget(new URL('https://shop.example/hook'), strict);
    expect(target).toMatchObject({ address: '93.184.216.34', family: 4 });
    expect(asked).toContain('shop.example/1');
  });

  it('asks for AAAA too, and an IPv6-only name resolves to its address', async () => {
    zone.set('v6.example', { aaaa: ['2606:2800:220:1::248'] });
    const target = await resolveWebhookTarget(new URL('https://v6.example/hook'), strict);
    expect(target).toMatchObject({ address: '2606:2800:220:1::248', family: 6 });
  });

  it('refuses a name with one private address among public ones, in either family', async () => {
    zone.set('mixed4.example', { a: ['93.184.216.34', '10.0.0.7'] });
    zone.set('mixed6.example', { a: ['93.184.216.34'], aaaa: ['::1'] });
    for (const host of ['mixed4.example', 'mixed6.example']) {
      const err = await resolveWebhookTarget(new URL(`https://${host}/hook`), strict).catch((e: unknown) => e);
      expect(err, host).toBeInstanceOf(TargetRefusedError);
      expect((err as TargetRefusedError).unresolved, host).toBe(false);
    }
  });

  it('gives up when the name server does not answer (unresolved, not a hang)', async () => {
    zone.set('slow.example', { silent: true });
    const err = await resolveWebhookTarget(new URL('https://slow.example/hook'), strict, 300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetRefusedError);
    expect((err as TargetRefusedError).unresolved).toBe(true);
    expect((err as Error).message).toMatch(/did not resolve within 300 ms/);
  });

  it('does not ask DNS for localhost: loopback, refused unless private networks are allowed', async () => {
    await expect(resolveWebhookTarget(new URL('http://api.localhost:9/'), strict)).rejects.toBeInstanceOf(TargetRefusedError);
    expect((await resolveWebhookTarget(new URL('http://localhost:9/'), { ...strict, allowPrivateNetworks: true })).address).toBe('127.0.0.1');
    expect(asked.filter((q) => q.includes('localhost'))).toEqual([]);
  });
});
