import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { ROOT } from '../support/processes';
import { type TestServer } from '../support/server';
import { checkAnswer, runnableBlocks, RUNNABLE_MARKER, type DocsBlock } from './readmeSnippets';
import { sharedGateway } from '../support/server';

/**
 * The guides' commands, run as written (issue 14, item 5): every ```bash block marked runnable
 * (`<!-- docs-test -->`, see readmeSnippets.ts) in README.md and docs/*.md, against a real gateway on an
 * ephemeral port. `localhost:3000` becomes that gateway; `$BASE` is its URL and `$SK` a fresh account's
 * key unless the guide's own answers name them. Each command must exit 0 and print what its `# →` line
 * says. The blocks of one file run in order and share the values their answers name (the README's tour
 * uses the key of its quick start).
 */
const GUIDES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const run = promisify(execFile);

let server: TestServer;
let port: string;
beforeAll(async () => {
  server = await sharedGateway();
  port = new URL(server.baseUrl).port;
});
afterAll(async () => server?.stop());

async function runBlock(block: DocsBlock, vars: Record<string, string>): Promise<void> {
  for (const { command, answer, line } of block.commands) {
    const where = `${block.file}:${line}`;
    let stdout: string;
    try {
      ({ stdout } = await run('bash', ['-o', 'pipefail', '-c', command.replaceAll('localhost:3000', `127.0.0.1:${port}`)], {
        cwd: ROOT,
        env: { ...process.env, ...vars },
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
      }));
    } catch (err) {
      throw new Error(`${where}: \`${command}\` failed: ${(err as Error).message}`, { cause: err });
    }
    if (answer === undefined) continue;
    try {
      Object.assign(vars, checkAnswer(answer.replaceAll('localhost:3000', `localhost:${port}`), stdout));
    } catch (err) {
      throw new Error(`${where}: \`${command}\` does not answer "${answer}": ${(err as Error).message}`, { cause: err });
    }
  }
}

describe('the guides\' commands run as written', () => {
  for (const file of GUIDES) {
    const blocks = runnableBlocks(file);
    if (blocks.length === 0) continue;
    describe(file, () => {
      const vars: Record<string, string> = {};
      beforeAll(async () => {
        const account = await createAccount(server.baseUrl, `docs ${file}`);
        Object.assign(vars, { BASE: server.baseUrl, SK: account.sk });
      });
      for (const block of blocks) {
        it(`the block at line ${block.line} (${block.commands.length} commands)`, async () => {
          expect(block.commands.length).toBeGreaterThan(0);
          await runBlock(block, vars);
        }, 180_000);
      }
    });
  }

  it('the README quick start is among them: an account, an express payment, its live stream', () => {
    const commands = runnableBlocks('README.md').flatMap((b) => b.commands.map((c) => c.command));
    expect(commands.some((c) => c.includes('/v1/sandbox/accounts'))).toBe(true);
    expect(commands.some((c) => c.includes('/v1/payment_intents') && c.includes('multicaixa_express'))).toBe(true);
    expect(commands.some((c) => /curl -s?N .*\/events/.test(c))).toBe(true);
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toContain(RUNNABLE_MARKER);
  });
});

describe('the guides\' links', () => {
  it('every relative link of README.md and docs/*.md names a file that exists', () => {
    const broken: string[] = [];
    for (const file of GUIDES) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
        const resolved = path.join(ROOT, path.dirname(file), target!.split('#')[0]!);
        if (!existsSync(resolved)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README links every guide in docs/', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const unlinked = GUIDES.filter((f) => f.startsWith('docs/') && !readme.includes(`](${f}`));
    expect(unlinked).toEqual([]);
  });
});
