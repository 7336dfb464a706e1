import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { graphqlBreaks, openapiBreaks, releases, RELEASES } from '../../contract/check';
import { ROOT } from '../support/processes';

/**
 * The contract as a product (contract decisions, "Versions and compatibility"): each release is kept
 * whole and named in the changelog, the working contract is not older than the newest release, and the
 * gate `npm run contract:check` runs on catches a breaking change in either document while letting an
 * addition to the open sets through. The gate itself runs in CI (.ci/run) on the real documents.
 */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const version = (yamlText: string) => (parseYaml(yamlText) as { info: { version: string } }).info.version;
const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-compat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('released contracts', () => {
  it('keep both documents under their version, each named in CHANGELOG.md, the newest being the working version', () => {
    const all = releases();
    expect(all).toEqual(expect.arrayContaining(['1.0.0', '1.1.0']));
    const changelog = read('CHANGELOG.md');
    for (const v of all) {
      const openapi = readFileSync(path.join(RELEASES, v, 'openapi.yaml'), 'utf8');
      expect(version(openapi), `contract/releases/${v}/openapi.yaml info.version`).toBe(v);
      expect(readFileSync(path.join(RELEASES, v, 'schema.graphql'), 'utf8')).toContain('type Query');
      expect(changelog).toMatch(new RegExp(`^## ${v.replace(/\./g, '\\.')} — \\d{4}-\\d{2}-\\d{2}$`, 'm'));
    }
    expect(version(read('openapi.yaml'))).toBe(all[all.length - 1]);
    expect(read('schema.graphql')).toContain(`(contract version ${all[all.length - 1]})`);
  });
});

describe('the breaking-change gate', () => {
  it('GraphQL: a field made nullable or removed is breaking; a new field is not', async () => {
    const sdl = read('schema.graphql');
    expect(sdl).toMatch(/\n {2}id: ID!\n/);
    expect((await graphqlBreaks(sdl, sdl)).breaks).toEqual([]);
    const added = sdl.replace(/type Query \{\n/, 'type Query {\n  "New."\n  contractProbe: Boolean\n');
    expect(added).not.toBe(sdl);
    expect((await graphqlBreaks(sdl, added)).breaks).toEqual([]);
    const nullable = sdl.replace(/(type PaymentIntent[^{]*\{[\s\S]*?\n {2}status: )(\w+)!/, '$1$2');
    expect(nullable).not.toBe(sdl);
    expect((await graphqlBreaks(sdl, nullable)).breaks.map((b) => b.message)).toEqual([expect.stringMatching(/^Field 'PaymentIntent\.status' changed type/)]);
  });

  it('OpenAPI: a removed response property is breaking; a new ErrorCode value is not (an open set)', async () => {
    const before = path.join(ROOT, 'openapi.yaml');
    const doc = parseYaml(read('openapi.yaml')) as { components: { schemas: Record<string, { enum?: string[]; properties?: Record<string, unknown>; required?: string[] }> } };
    // A new error code, and the Refund's `updated_at` gone from the responses.
    const { ErrorCode, Refund } = doc.components.schemas;
    expect(ErrorCode!.enum).toContain('service_unavailable');
    ErrorCode!.enum!.push('contract_probe');
    expect(Refund!.properties).toHaveProperty('updated_at');
    delete Refund!.properties!.updated_at;
    Refund!.required = Refund!.required!.filter((p) => p !== 'updated_at');
    const after = path.join(dir, 'openapi.yaml');
    writeFileSync(after, stringifyYaml(doc));
    const { breaks, allowed } = await openapiBreaks(before, after);
    expect(allowed, 'the new code, in every response that carries ErrorCode').toBeGreaterThan(0);
    expect(breaks.length).toBeGreaterThan(0);
    expect(breaks.every((b) => /cannot remove response property 'updated_at'/.test(b.message)), JSON.stringify(breaks, null, 1)).toBe(true);
  }, 120_000);
});
