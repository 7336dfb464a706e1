import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../src/paths';

/**
 * The lint rule of eslint.config.js that keeps state out of src/domain's modules: a module-level `let`
 * or mutable instance (a Map, a Set, a queue) there is shared by every gateway the process builds.
 * Planted sources are linted as if they were files of the tree (ESLint's lintText with a filePath),
 * so the checkout itself is never touched.
 */
const eslint = new ESLint({ cwd: ROOT });

async function violations(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('no module-level state in src/domain (npm run lint)', () => {
  it('refuses a module-level registry, an exported `let` and a flag, naming the rule', async () => {
    const planted = [
      'export const cache = new Map<string, number>();',
      'export let current = 0;',
      'let started = false;',
      'export function start(): void {',
      '  started = true;',
      '}',
      '',
    ].join('\n');
    const found = await violations('src/domain/payments/planted.ts', planted);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/module-level mutable instance in src\/domain/);
    expect(found[1]).toMatch(/module-level `let` in src\/domain/);
  });

  it('lets constant tables, schemas and state inside functions pass, and leaves other floors alone', async () => {
    const allowed = [
      "import { Schema } from 'mongoose';",
      "export const FINAL: ReadonlySet<string> = new Set(['SUCCEEDED']);",
      'export const schema = new Schema({});',
      'export function createCounter(): { next(): number } {',
      '  let n = 0;',
      '  const seen = new Map<string, number>();',
      '  return { next: () => seen.size + ++n };',
      '}',
      '',
    ].join('\n');
    expect(await violations('src/domain/payments/planted.ts', allowed)).toEqual([]);
    expect(await violations('src/realtime/planted.ts', 'export const cache = new Map<string, number>();\n')).toEqual([]);
  });
});
