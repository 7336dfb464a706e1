import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { graphqlBreaks, majorReleaseSaysSo, openapiBreaks, releases, RELEASES } from '../../contract/check';
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
  it('lets a break through only as a new major version with its own section in the changelog', () => {
    const changelog = '# Changelog\n\n## 2.0.0 — 2027-01-01\n\n### Breaking\n- url removed\n\n## 1.1.0 — 2026-12-06\n';
    expect(majorReleaseSaysSo('2.0.0', '1.1.0', changelog)).toBe(true);
    expect(majorReleaseSaysSo('1.2.0', '1.1.0', changelog.replace('2.0.0', '1.2.0')), 'a minor version').toBe(false);
    expect(majorReleaseSaysSo('2.0.0', '1.1.0', changelog.replace('## 2.0.0', '## 2.0.1')), 'no section for it').toBe(false);
    expect(majorReleaseSaysSo('1.1.0', '1.1.0', read('CHANGELOG.md')), 'the version released already').toBe(false);
  });

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

  it('OpenAPI: a removed response property, a narrowed request type and a new required parameter are breaking; a new ErrorCode value is not', async () => {
    type Schema = { type?: string; enum?: string[]; properties?: Record<string, Schema>; required?: string[] };
    type Doc = { paths: Record<string, Record<string, { parameters?: unknown[] }>>; components: { schemas: Record<string, Schema> } };
    // The routes the changes below reach, with every component: Optic takes ~30 s of CPU on the whole
    // document and a second on these. The gate on the whole document runs in CI (npm run contract:check).
    const withTheirRoutes = (doc: Doc): Doc => ({ ...doc, paths: Object.fromEntries(Object.entries(doc.paths).filter(([p]) => /^\/(payment_intents|refunds)(\/\{id\})?$/.test(p))) });
    const before = path.join(dir, 'before.yaml');
    writeFileSync(before, stringifyYaml(withTheirRoutes(parseYaml(read('openapi.yaml')) as Doc)));
    const doc = withTheirRoutes(parseYaml(read('openapi.yaml')) as Doc);
    expect(Object.keys(doc.paths).sort()).toEqual(['/payment_intents', '/payment_intents/{id}', '/refunds', '/refunds/{id}']);
    const { ErrorCode, Refund, CreatePaymentIntentRequest } = doc.components.schemas;
    // Allowed: a new error code (an open set).
    expect(ErrorCode!.enum).toContain('service_unavailable');
    ErrorCode!.enum!.push('contract_probe');
    // A removed field: the Refund's `updated_at` gone from the responses.
    expect(Refund!.properties).toHaveProperty('updated_at');
    delete Refund!.properties!.updated_at;
    Refund!.required = Refund!.required!.filter((p) => p !== 'updated_at');
    // A narrowed type: `merchant_reference` was a string, now an integer.
    expect(CreatePaymentIntentRequest!.properties!.merchant_reference).toMatchObject({ type: 'string' });
    CreatePaymentIntentRequest!.properties!.merchant_reference = { type: 'integer' };
    // A new required parameter on GET /payment_intents.
    doc.paths['/payment_intents']!.get!.parameters!.push({ name: 'contract_probe', in: 'query', required: true, schema: { type: 'string' } });
    const after = path.join(dir, 'openapi.yaml');
    writeFileSync(after, stringifyYaml(doc));

    const { breaks, allowed } = await openapiBreaks(before, after);
    expect(allowed, 'the new code, in every response that carries ErrorCode').toBeGreaterThan(0);
    const messages = breaks.map((b) => b.message);
    const found = (re: RegExp) => messages.filter((m) => re.test(m)).length;
    expect(found(/cannot remove response property 'updated_at'/), messages.join('\n')).toBeGreaterThan(0);
    expect(found(/'merchant_reference'/), messages.join('\n')).toBeGreaterThan(0);
    expect(found(/contract_probe/), messages.join('\n')).toBeGreaterThan(0);
    // Nothing else, and nothing about the new code.
    expect(messages.filter((m) => !/'updated_at'|'merchant_reference'|contract_probe/.test(m)), messages.join('\n')).toEqual([]);
    expect(found(/'contract_probe' from 'code'/)).toBe(0);
  }, 120_000);
});
