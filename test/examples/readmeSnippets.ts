import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/processes';

/**
 * The first fenced code block (```ts / ```sh …) under the heading `heading` (a `### ` line) of the tools
 * guide the README links to (`docs/tools.md`), as written: the tests run what the guide shows, not a copy
 * that could drift from it.
 */
export function readmeBlock(heading: string, lang = 'ts', file = 'docs/tools.md'): string {
  const readme = readFileSync(path.join(ROOT, file), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no heading ${heading}`);
  const nextHeading = readme.slice(start + heading.length + 2).search(/\n#{2,3} /);
  const section = nextHeading < 0 ? readme.slice(start) : readme.slice(start, start + heading.length + 2 + nextHeading);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  if (!m) throw new Error(`README section ${heading} has no \`\`\`${lang} block`);
  return m[1]!;
}

/**
 * Writes a TypeScript snippet inside the repository (so `@pgw/client` resolves through the workspace
 * link, as it does for a reader in the repo) and runs it with tsx; resolves to its stdout.
 */
export async function runTsSnippet(code: string, env: Record<string, string>, name = 'snippet'): Promise<string> {
  const dir = path.join(ROOT, 'test-artifacts', 'readme-snippets');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${process.pid}-${Date.now()}.ts`);
  writeFileSync(file, code);
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return stdout;
}
