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

/**
 * The runnable shell blocks of the guides: a ```bash block right after a `<!-- docs-test -->` line.
 * Each command of a block (a line that is not a comment, with its `\` continuations and quoted line
 * breaks) may be followed by an answer line, `# → <what it prints>`, which the docs test holds it to:
 * - `# → {"id":"acct_…","sk":"$SK",…}`: JSON, with `…` for what is left out (members, or the rest of a
 *   string) and `<…>` for any string; a string written `$NAME` is the value later commands use as $NAME;
 *   an optional HTTP status before the JSON (`# → 201 {…}`) is for the reader (curl -s prints no status);
 * - `# → event: snapshot … event: payment.succeeded`: text that contains these pieces, in that order.
 */
export const RUNNABLE_MARKER = '<!-- docs-test -->';

export interface DocsCommand {
  /** The command as the guide writes it. */
  command: string;
  /** Its answer line (after `# → `), if the guide shows one. */
  answer?: string;
  /** 1-based line of the command in the file. */
  line: number;
}

export interface DocsBlock {
  file: string;
  line: number;
  commands: DocsCommand[];
}

export function runnableBlocks(file: string): DocsBlock[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: DocsBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== RUNNABLE_MARKER) continue;
    if (!/^```(bash|sh)\s*$/.test(lines[i + 1] ?? '')) throw new Error(`${file}:${i + 1}: ${RUNNABLE_MARKER} is not followed by a \`\`\`bash block`);
    const block: DocsBlock = { file, line: i + 2, commands: [] };
    let j = i + 2;
    for (; j < lines.length && !lines[j]!.startsWith('```'); j++) {
      const text = lines[j]!;
      const answer = /^#\s*→\s*(.*)$/.exec(text.trim());
      if (answer) {
        const last = block.commands.at(-1);
        if (!last || last.answer !== undefined) throw new Error(`${file}:${j + 1}: an answer line with no command before it`);
        last.answer = answer[1]!.trim();
        continue;
      }
      if (text.trim() === '' || text.trim().startsWith('#')) continue;
      // A command goes on while a line ends with a backslash or a quote is still open.
      let command = text;
      const start = j;
      while ((/\\\s*$/.test(command) || !quotesClosed(command)) && j + 1 < lines.length && !lines[j + 1]!.startsWith('```')) command += '\n' + lines[++j];
      block.commands.push({ command, line: start + 1 });
    }
    blocks.push(block);
    i = j;
  }
  return blocks;
}

function quotesClosed(command: string): boolean {
  let quote: string | undefined;
  for (let k = 0; k < command.length; k++) {
    const c = command[k]!;
    if (quote) {
      if (c === '\\' && quote === '"') k++;
      else if (c === quote) quote = undefined;
    } else if (c === '\\') k++;
    else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (k === 0 || /\s/.test(command[k - 1]!))) break; // a trailing comment
  }
  return quote === undefined;
}

/**
 * Holds a command's output to its answer line; returns the values the answer names (`$NAME`). Throws
 * with what differs.
 */
export function checkAnswer(answer: string, output: string): Record<string, string> {
  const json = /^(\d{3}\s+)?([{[][\s\S]*)$/.exec(answer);
  if (!json) {
    let from = 0;
    for (const piece of answer.split('…').map((p) => p.trim()).filter(Boolean)) {
      const at = output.indexOf(piece, from);
      if (at < 0) throw new Error(`output lacks "${piece}" (in order of the answer "${answer}"):\n${output.slice(0, 2000)}`);
      from = at + piece.length;
    }
    return {};
  }
  const expected = JSON.parse(withoutElisions(json[2]!)) as unknown;
  let actual: unknown;
  try {
    actual = JSON.parse(output);
  } catch {
    throw new Error(`output is not JSON:\n${output.slice(0, 2000)}`);
  }
  const names: Record<string, string> = {};
  matchValue(expected, actual, '', names);
  return names;
}

/** Drops the `…` that stand for left-out members (outside strings), with their comma. */
function withoutElisions(text: string): string {
  let out = '';
  let inString = false;
  for (let k = 0; k < text.length; k++) {
    const c = text[k]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++k] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c !== '…') out += c;
  }
  // Commas left dangling by a removed member.
  return out.replace(/,\s*(?=[}\]])/g, '').replace(/([{[])\s*,/g, '$1').replace(/,\s*,/g, ',');
}

function matchValue(expected: unknown, actual: unknown, at: string, names: Record<string, string>): void {
  const where = at || '(the answer)';
  if (typeof expected === 'string') {
    if (typeof actual !== 'string') throw new Error(`${where}: expected a string, got ${JSON.stringify(actual)}`);
    const name = /^\$([A-Z_][A-Z0-9_]*)$/.exec(expected)?.[1];
    if (name) {
      if (!actual) throw new Error(`${where}: empty, but the guide uses it as $${name}`);
      names[name] = actual;
      return;
    }
    const pattern = expected
      .split(/…|<[^>]*>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    if (!new RegExp(`^${pattern}$`, 's').test(actual)) throw new Error(`${where}: "${actual}" is not "${expected}"`);
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length < expected.length) throw new Error(`${where}: expected at least ${expected.length} items, got ${JSON.stringify(actual)?.slice(0, 500)}`);
    expected.forEach((e, i) => matchValue(e, actual[i], `${at}[${i}]`, names));
    return;
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object') throw new Error(`${where}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) throw new Error(`${at ? `${at}.` : ''}${key}: missing from ${JSON.stringify(actual).slice(0, 500)}`);
      matchValue(value, (actual as Record<string, unknown>)[key], at ? `${at}.${key}` : key, names);
    }
    return;
  }
  if (expected !== actual) throw new Error(`${where}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`);
}
