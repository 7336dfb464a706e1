/**
 * Issue 16 item 4: the gateway's in-process embedded engine is reachable by the gateway alone. It
 * listens on an owner-only Unix socket in a private directory and on no TCP port (a TCP port on
 * loopback answers any local process, with no credentials), and what it keeps on disk is owner-only.
 * Skipped when MONGODB_URI is set: there is no in-process engine then.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { startTestServer } from '../support/server';

const EXTERNAL = Boolean(process.env.MONGODB_URI);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** TCP ports this process listens on: /proc/net/tcp{,6} LISTEN entries whose inode is one of our fds. */
function listeningTcpPorts(): number[] {
  const ours = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`));
      if (m) ours.add(m[1]!);
    } catch {
      // the fd closed between readdir and readlink
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [, local, , state, , , , , , inode] = cols;
      if (state === '0A' && ours.has(inode!)) ports.add(parseInt(local!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

describe.skipIf(EXTERNAL)('the gateway database is reachable by the gateway alone', () => {
  it('listens on no TCP port for its database: only the HTTP port is open', async () => {
    const server = await startTestServer();
    try {
      expect(server.gateway.db.uri).toMatch(/^mongodb:\/\/%2F.+\.sock\/\?directConnection=true$/);
      expect(listeningTcpPorts()).toEqual([server.gateway.port]);
    } finally {
      await server.stop();
    }
  });

  it('puts its socket in a private directory (0700, socket 0600) and removes both on close', async () => {
    const server = await startTestServer();
    const socketPath = server.gateway.db.socketPath!;
    try {
      expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
      expect(mode(socketPath)).toBe(0o600);
      expect(path.dirname(path.dirname(socketPath))).toBe(os.tmpdir());
      expect(mode(path.dirname(socketPath))).toBe(0o700);
      expect(fs.readdirSync(path.dirname(socketPath))).toEqual([path.basename(socketPath)]);
    } finally {
      await server.stop();
    }
    expect(fs.existsSync(socketPath)).toBe(false);
    expect(fs.existsSync(path.dirname(socketPath))).toBe(false);
  });

  it('keeps its data directory 0700 and every file in it 0600, tightening looser ones at start', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-data-'));
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    const first = await startTestServer({ DATA_DIR: dataDir });
    try {
      const account = await createAccount(first.baseUrl);
      const res = await account.api.post(
        '/payment_intents',
        { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
        { idempotencyKey: idempotencyKey() },
      );
      expect([res.status, res.text]).toEqual([201, expect.any(String)]);
    } finally {
      await first.stop();
    }
    const files = fs.readdirSync(dataDir);
    expect(files.some((f) => f.startsWith('journal-'))).toBe(true);
    expect(mode(dataDir)).toBe(0o700);
    for (const f of files) expect([f, mode(path.join(dataDir, f))]).toEqual([f, 0o600]);

    // Left looser by an older version, a copy or a restore: tightened when the gateway starts.
    fs.chmodSync(dataDir, 0o755);
    for (const f of files) fs.chmodSync(path.join(dataDir, f), 0o644);
    const second = await startTestServer({ DATA_DIR: dataDir });
    try {
      expect(mode(dataDir)).toBe(0o700);
      for (const f of files) expect([f, mode(path.join(dataDir, f))]).toEqual([f, 0o600]);
    } finally {
      await second.stop();
    }
  });
});
