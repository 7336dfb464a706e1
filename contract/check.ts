/**
 * `npm run contract:check`: the working contract (openapi.yaml, schema.graphql) against the last release
 * under contract/releases/, failing on a breaking change (contract decisions, "Versions and
 * compatibility"). Maintained tools judge, not code of ours: Optic's breaking-changes ruleset for the
 * OpenAPI document (offline, telemetry off) and @graphql-inspector/core for the schema. The one rule of
 * ours: a value added to `ErrorCode` or `EventType` is compatible, as openapi.yaml documents both as open
 * sets, where Optic counts every response enum as closed.
 *
 *   npm run contract:check                     against the newest release
 *   npm run contract:check -- --against 1.0.0  against another one (a changelog's raw material)
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { parse as parseYaml } from 'yaml';

/**
 * graphql as Node resolves it for @graphql-inspector/core (its CommonJS entry: graphql 16 has no
 * `exports`), not as a bundler would (its `.mjs`): a schema built by the other copy is refused as
 * "from another realm" (under vitest, which resolves the `.mjs`).
 */
const { buildSchema } = createRequire(import.meta.url)('graphql') as typeof import('graphql');

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASES = path.join(ROOT, 'contract/releases');

/** The released versions, oldest first. */
export function releases(): string[] {
  const semver = (v: string) => v.split('.').map(Number);
  return readdirSync(RELEASES)
    .filter((v) => /^\d+\.\d+\.\d+$/.test(v))
    .sort((a, b) => {
      const [x, y] = [semver(a), semver(b)];
      return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
    });
}

export interface Break {
  where: 'openapi' | 'graphql';
  message: string;
}

/** The breaking changes from one GraphQL schema to another (graphql-inspector's BREAKING level). */
export async function graphqlBreaks(before: string, after: string): Promise<{ breaks: Break[]; changes: number }> {
  const changes = await diff(buildSchema(before), buildSchema(after));
  const breaks = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking).map((c) => ({ where: 'graphql' as const, message: c.message }));
  return { breaks, changes: changes.length };
}

/** The values of the contract's open sets, by the property that carries them in responses and events. */
function openSets(openapiPath: string): Record<string, Set<string>> {
  const doc = parseYaml(readFileSync(openapiPath, 'utf8')) as { components: { schemas: Record<string, { enum?: string[] }> } };
  return {
    code: new Set(doc.components.schemas.ErrorCode?.enum ?? []),
    type: new Set(doc.components.schemas.EventType?.enum ?? []),
  };
}

const OPTIC = path.join(ROOT, 'node_modules/.bin/optic');
const OPTIC_STANDARD = path.join(ROOT, 'contract/optic.yml');
/** `x [rule] message` lines of Optic's report. */
const FAILED_RULE = /^\s*x \[([^\]]+)\] (.+)$/;
const ENUM_ADDED = /^cannot add enum options? '([^']+)' from '([^']+)' property\./;
/** The same addition seen through a `oneOf` that references the enum (a log entry's `error_code`). */
const ONE_OF_ENUM_ADDED = /^response property oneOf schema did not overlap with the previous schema\. oneOf\/\d+: enums (.+) were removed$/;

/** The breaking changes from one OpenAPI document to another, by Optic's breaking-changes ruleset. */
export async function openapiBreaks(beforePath: string, afterPath: string): Promise<{ breaks: Break[]; allowed: number }> {
  const { code, out } = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      OPTIC,
      ['diff', beforePath, afterPath, '--check', '--validation', 'loose', '--standard', OPTIC_STANDARD],
      // Not told it runs in CI (CI=true, as .ci/run sets): it would then write ci-run-details.json here.
      { cwd: ROOT, env: { ...process.env, OPTIC_TELEMETRY_LEVEL: 'off', CI: '' }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
  const open = openSets(afterPath);
  const breaks: Break[] = [];
  let allowed = 0;
  const lines = out.split('\n');
  lines.forEach((line, i) => {
    const m = FAILED_RULE.exec(line);
    if (!m) return;
    const added = ENUM_ADDED.exec(m[2]!);
    const viaOneOf = ONE_OF_ENUM_ADDED.exec(m[2]!);
    const openValue = (v: string, property?: string) => (property ? open[property]?.has(v) : open.code!.has(v) || open.type!.has(v));
    if ((added && added[1]!.split(', ').every((v) => openValue(v, added[2]))) || (viaOneOf && viaOneOf[1]!.split(', ').every((v) => openValue(v)))) {
      allowed++;
      return;
    }
    const at = /^\s*at (.+)$/.exec(lines[i + 1] ?? '')?.[1];
    breaks.push({ where: 'openapi', message: `[${m[1]}] ${m[2]}${at ? ` (${path.basename(at)})` : ''}` });
  });
  // Optic refused to compare (an invalid document, a crash): that is a failure too, with its words.
  if (code !== 0 && breaks.length === 0 && allowed === 0) breaks.push({ where: 'openapi', message: `optic diff failed (exit ${code}):\n${out.slice(-4_000)}` });
  return { breaks, allowed };
}

/**
 * A breaking change passes only as a new major version that says so: `info.version` of a higher major
 * than the release compared against, with its own section in CHANGELOG.md (whose notes tell clients
 * what to do). Anything less fails.
 */
export function majorReleaseSaysSo(workingVersion: string, releaseVersion: string, changelog: string): boolean {
  const major = (v: string) => Number(v.split('.')[0]);
  const heading = new RegExp(`^## ${workingVersion.replace(/\./g, '\\.')}\\b`, 'm');
  return major(workingVersion) > major(releaseVersion) && heading.test(changelog);
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--against');
  const all = releases();
  const against = i > 0 ? process.argv[i + 1]! : all[all.length - 1]!;
  if (!all.includes(against)) throw new Error(`no release ${against} under contract/releases (have: ${all.join(', ')})`);
  const release = path.join(RELEASES, against);
  const [gql, rest] = await Promise.all([
    graphqlBreaks(readFileSync(path.join(release, 'schema.graphql'), 'utf8'), readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8')),
    openapiBreaks(path.join(release, 'openapi.yaml'), path.join(ROOT, 'openapi.yaml')),
  ]);
  const breaks = [...rest.breaks, ...gql.breaks];
  const allowedNote = rest.allowed ? `; ${rest.allowed} additions to the open sets ErrorCode and EventType, which are compatible` : '';
  if (breaks.length === 0) {
    process.stdout.write(`contract:check: no breaking change against release ${against} (GraphQL: ${gql.changes} changes in all${allowedNote}).\n`);
    return;
  }
  const working = (parseYaml(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as { info: { version: string } }).info.version;
  const saidSo = majorReleaseSaysSo(working, against, readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8'));
  console.error(`contract:check: ${breaks.length} breaking change(s) against release ${against}${allowedNote}${saidSo ? `, released as ${working} (a new major, in CHANGELOG.md)` : ''}:`);
  for (const b of breaks) console.error(`  ${b.where}: ${b.message}`);
  if (saidSo) return;
  console.error('A breaking change needs a new major version and path, with its notes in CHANGELOG.md ("Compatibility"); undo it, or make it compatible.');
  process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
