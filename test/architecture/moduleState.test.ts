import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../src/paths';

/**
 * The lint rule of eslint.config.js that keeps state out of the gateway's modules: a module-level `let`,
 * mutable instance (a Map, a Set, a queue) or array anywhere in src but the dashboard's browser bundle is
 * shared by every gateway the process builds. Planted sources are linted as if they were files of the
 * tree (ESLint's lintText with a filePath), so the checkout itself is never touched.
 */
const eslint = new ESLint({ cwd: ROOT });

/** The rules that fired on `source` linted as `file` (an ignored file would say so, with no rule). */
async function rulesFired(file: string, source: string): Promise<Array<{ ruleId: string | null; message: string }>> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  return result!.messages;
}

async function violations(file: string, source: string): Promise<string[]> {
  return (await rulesFired(file, source)).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

const lines = (...source: string[]) => [...source, ''].join('\n');

describe('no module-level state in src (npm run lint)', () => {
  it('refuses a module-level registry, an exported `let` and a flag, naming the rule', async () => {
    const planted = lines('export const cache = new Map<string, number>();', 'export let current = 0;', 'let started = false;', 'export function start(): void {', '  started = true;', '}');
    const found = await violations('src/domain/payments/planted.ts', planted);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^module-level mutable instance \(no-restricted-syntax\)/);
    expect(found[1]).toMatch(/^module-level `let` \(no-restricted-syntax\)/);
    for (const message of found) expect(message).toContain('docs/architecture.md, "State"');
  });

  it('refuses the same outside src/domain: the protocols, the platform, the base', async () => {
    expect(await violations('src/realtime/planted.ts', 'export const cache = new Map<string, number>();\n')).toHaveLength(1);
    expect(await violations('src/graphql/httpSubscriptions/planted.ts', 'let open = 0;\n')).toHaveLength(1);
    expect(await violations('src/planted.ts', 'export const seen = new Set<string>();\n')).toHaveLength(1);
    expect(await violations('src/dashboard/planted.tsx', 'export const sockets = new Set<string>();\n')).toHaveLength(1);
  });

  it('refuses a module-level array that is not read-only, exported or not', async () => {
    const planted = lines(
      "const queue = ['a'];",
      'export const listeners: Array<() => void> = [];',
      'export const hooks: string[] = [];',
      'const pending = [] as string[];',
      "export const names = ['a', 'b'] satisfies string[];",
    );
    const found = await violations('src/realtime/planted.ts', planted);
    expect(found).toHaveLength(5);
    for (const message of found) expect(message).toMatch(/^module-level mutable array \(no-restricted-syntax\)/);
  });

  it('lets constant tables, schemas and state inside functions pass', async () => {
    const allowed = lines(
      "import { Schema } from 'mongoose';",
      "export const FINAL: ReadonlySet<string> = new Set(['SUCCEEDED']);",
      'export const BY_CODE: ReadonlyMap<string, number> = new Map([["a", 1]]);',
      "export const KINDS = ['ws', 'sse'] as const;",
      "const ENDINGS: readonly string[] = ['secret', 'token'];",
      'const DAYS: ReadonlyArray<number> = [31, 28];',
      "const TYPES = ['a', 'b'] as readonly string[];",
      'export const schema = new Schema({});',
      'export function createCounter(): { next(): number } {',
      '  let n = 0;',
      '  const seen = new Map<string, number>();',
      '  const order: string[] = [];',
      '  return { next: () => seen.size + order.length + ++n + ENDINGS.length + DAYS.length + TYPES.length };',
      '}',
    );
    expect(await violations('src/domain/payments/planted.ts', allowed)).toEqual([]);
    expect(await violations('src/realtime/planted.ts', allowed)).toEqual([]);
  });

  it('takes a per-process exception written with its reason', async () => {
    const excepted = lines(
      '// eslint-disable-next-line no-restricted-syntax -- one prom-client registry per process: /metrics scrapes the process',
      'export const registry = new Map<string, number>();',
      '/* eslint-disable no-restricted-syntax -- the machine clock: one for the process */',
      'let base = 0;',
      'let steps = 0;',
      '/* eslint-enable no-restricted-syntax */',
      'export const read = () => base + steps;',
    );
    expect(await violations('src/metrics/planted.ts', excepted)).toEqual([]);
  });

  it("leaves the dashboard's browser bundle alone: one page, one instance of each module", async () => {
    const planted = lines('export const cache = new Map<string, number>();', 'let session = null;', 'export const toasts: string[] = [];', 'export const get = () => session;');
    expect(await violations('src/dashboard/app/planted.ts', planted)).toEqual([]);
    expect(await violations('src/dashboard/app/views/planted.tsx', planted)).toEqual([]);
    // Linted all the same, by every other rule.
    const fired = await rulesFired('src/dashboard/app/planted.ts', `${planted}console.log(cache);\n`);
    expect(fired.map((m) => m.ruleId)).toContain('no-console');
  });
});
