// openapi.yaml is what integrators read first (the docs page renders it): these tests keep it described.
// The Redocly rules in redocly.yaml require a description on every schema, property, operation and
// parameter; this file checks that those rules still catch what they are meant to, and what a rule
// cannot: that every error code, state and event type is explained, and that every operation says
// which permission it needs (Swagger UI does not show `x-permission`).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const text = readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8');
type Obj = Record<string, any>;
const doc = parse(text) as Obj;
const schemas = doc.components.schemas as Record<string, Obj>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Every enum value of `schema` appears in its description as inline code. */
function undescribedValues(schema: Obj): string[] {
  const description = String(schema.description ?? '');
  return (schema.enum as string[]).filter((value) => !description.includes(`\`${value}\``));
}

describe('enum values are explained', () => {
  it.each([
    ['ErrorCode', schemas.ErrorCode],
    ['PaymentIntentStatus', schemas.PaymentIntentStatus],
    ['FailureCode', schemas.FailureCode],
    ['EventType', schemas.EventType],
    ['MethodCode', schemas.MethodCode],
    ['WebhookDelivery.state', schemas.WebhookDelivery?.properties?.state],
    ['CheckoutSession.status', schemas.CheckoutSession?.properties?.status],
    ['Refund.status', schemas.Refund?.properties?.status],
    ['ApiKey.type', schemas.ApiKey?.properties?.type],
  ])('%s', (_name, schema) => {
    expect(schema?.enum?.length).toBeGreaterThan(0);
    expect(undescribedValues(schema)).toEqual([]);
  });

  it('ErrorCode gives each code its HTTP status', () => {
    const errorCode = schemas.ErrorCode!;
    for (const code of errorCode.enum as string[]) {
      expect(errorCode.description, code).toMatch(new RegExp(`\`${code}\`[^\\n]*\\(\\d{3}\\)`));
    }
  });
});

describe('every operation states who may call it', () => {
  const ops = [...Object.entries<Obj>(doc.paths)].flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${p}`, item[m] as Obj] as const),
  );

  it.each(ops)('%s', (_label, op) => {
    const description = String(op.description ?? '');
    const permission = op['x-permission'] as string | undefined;
    if (Array.isArray(op.security) && op.security.length === 0) {
      expect(permission).toBeUndefined();
      expect(description).toMatch(/^Public: no credentials/m);
    } else if (permission === 'any_key' || permission === 'secret_key') {
      expect(description).toMatch(new RegExp(`^Permission: .*\\(\`${permission}\`\\)`, 'm'));
    } else {
      expect(permission).toMatch(/^[a-z_]+:(read|write)$/);
      expect(description).toMatch(new RegExp(`^Permission: \`${permission}\`\\.$`, 'm'));
    }
  });
});

describe('redocly.yaml description rules', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'descriptions-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const lintEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

  it('catch a missing contact, schema, property, operation and parameter description', async () => {
    const broken = parse(text) as Obj;
    delete broken.info.contact;
    delete broken.components.schemas.Health.description; // a schema no property refers to
    delete broken.components.schemas.Refund.properties.amount.description;
    delete broken.components.schemas.PaymentMethod.properties.channels.properties.api.description;
    delete broken.paths['/refunds/{id}'].get.description;
    delete broken.components.parameters.PageLimit.description;
    const file = path.join(dir, 'openapi.yaml');
    writeFileSync(file, stringify(broken));
    const out = await run('npx', ['redocly', 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=summary'], {
      cwd: ROOT,
      env: lintEnv,
      timeout: 120_000,
    }).then(
      (r) => `${r.stdout}\n${r.stderr}`,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout}\n${err.stderr}`,
    );
    expect(out).toMatch(/error\s+info-contact: 1\b/);
    expect(out).toMatch(/error\s+rule\/schema-description: 1\b/);
    expect(out).toMatch(/error\s+rule\/property-description: 2\b/);
    expect(out).toMatch(/error\s+rule\/operation-description: 1\b/);
    expect(out).toMatch(/error\s+rule\/parameter-description: 1\b/);
  });
});
