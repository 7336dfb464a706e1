import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectRefused, freePort, ROOT } from '../support/processes';

/**
 * A supervisor (systemd, a container runtime, a shell's `kill`) signals the process it started: for
 * `npm start`, npm itself. npm passes SIGTERM and SIGINT on to its script's process, which must be the
 * gateway: package.json's "start" `exec`s node (a shell that forks node instead dies of the signal and
 * leaves the gateway orphaned and serving; docs/operations.md, "Stopping and starting"). Each case starts
 * `npm start` (start.mjs builds dist/ first when it is stale), finds the gateway among npm's descendants,
 * signals npm's pid only, and checks that the gateway ran its graceful stop and is gone, and that its port
 * is closed.
 */

interface ProcInfo {
  pid: number;
  ppid: number;
  state: string;
}

/** Every process's parent and state, from /proc (Linux): `comm` may hold spaces, so parse after its ')'. */
function processTable(): ProcInfo[] {
  const table: ProcInfo[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.push({ pid: Number(name), ppid: Number(ppid), state: state! });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

function descendants(root: number): number[] {
  const table = processTable();
  const found: number[] = [];
  for (let frontier = [root]; frontier.length > 0; ) {
    frontier = table.filter((p) => frontier.includes(p.ppid)).map((p) => p.pid);
    found.push(...frontier);
  }
  return found;
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Gone, or a zombie (it has exited; its parent has not reaped it yet). */
function exited(pid: number): boolean {
  const p = processTable().find((q) => q.pid === pid);
  return !p || p.state === 'Z';
}

async function startNpm(port: number) {
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, VITEST: '', NODE_ENV: 'production', LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  npm.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
  // A first start after a change builds dist/ (start.mjs): up to a minute on a busy machine.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (npm.exitCode !== null || npm.signalCode !== null) throw new Error(`npm start exited (${npm.exitCode ?? npm.signalCode}) before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      npm.kill('SIGKILL');
      throw new Error(`npm start not ready within 120 s:\n${output}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { npm, exit, output: () => output };
}

describe('npm start under a supervisor: a signal to npm stops the gateway gracefully', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to npm's pid: the gateway logs its graceful stop, exits, npm exits 0, the port is closed`, async () => {
      const port = await freePort();
      const { npm, exit, output } = await startNpm(port);
      // The node process running start.mjs (not a shell whose command line names it).
      const gateways = descendants(npm.pid!).filter((pid) => /(^|\/)node$/.test(commandLine(pid).split(' ')[0]!) && commandLine(pid).includes('start.mjs'));
      try {
        expect(gateways, `npm's descendants: ${descendants(npm.pid!).map((p) => `${p} ${commandLine(p)}`).join('; ')}`).toHaveLength(1);

        npm.kill(signal);
        const { code } = await exit;
        // npm waits for its script and exits with its code: the gateway's, 0 after a graceful stop.
        expect(code, output()).toBe(0);
        const logs = output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg?: string; signal?: string });
        expect(logs.find((l) => l.msg === 'shutting down gracefully')?.signal, output()).toBe(signal);
        expect(logs.some((l) => l.msg === 'gateway stopped'), output()).toBe(true);
        expect(exited(gateways[0]!), `gateway ${gateways[0]} still running after npm exited`).toBe(true);
        expect(await connectRefused(port), `port ${port} still accepts connections after npm exited`).toBe(true);
      } finally {
        for (const pid of [npm.pid!, ...gateways]) {
          if (!exited(pid)) process.kill(pid, 'SIGKILL');
        }
      }
    }, 180_000);
  }
});
