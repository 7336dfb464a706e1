import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../src/paths';

/**
 * The import rules of docs/architecture.md (.dependency-cruiser.cjs), run as CI runs them: the real
 * dependency-cruiser CLI. The real tree passes; each planted violation lives in a throw-away tree under
 * the system's temp directory (never in the checkout), laid out like the gateway's, and fails the check
 * with the rule's name.
 */
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');

interface Run {
  code: number;
  output: string;
}

function depcruise(cwd: string, dirs: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(DEPCRUISE, [...dirs, '--config', CONFIG], { cwd, timeout: 300_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : NaN) : 0;
      if (err && Number.isNaN(code)) return reject(err);
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

const trees: string[] = [];
afterEach(async () => {
  await Promise.all(trees.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A temp tree with a tsconfig like the gateway's and these files (path -> source). */
async function plantedTree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-import-rules-'));
  trees.push(dir);
  const tsconfig = { compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', allowJs: true }, include: ['src', 'packages'] };
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  for (const [file, source] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), source);
  }
  return dir;
}

const DOMAIN_MODULE = { 'src/domain/payments/paymentStates.ts': 'export const FINAL = ["SUCCEEDED"];\n' };

describe('import rules (npm run lint:deps)', () => {
  it('the gateway as it is passes', async () => {
    const run = await depcruise(ROOT, ['src', 'packages']);
    expect(run.output).not.toMatch(/^\s*error /m);
    expect(run.code, run.output).toBe(0);
  }, 300_000);

  it('fails when the platform imports the domain, naming the rule and the import', async () => {
    const dir = await plantedTree({
      ...DOMAIN_MODULE,
      'src/platform/__planted.ts': "import { FINAL } from '../domain/payments/paymentStates';\nexport const planted = FINAL;\n",
    });
    const run = await depcruise(dir, ['src']);
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/error platform-imports-no-domain: src\/platform\/__planted\.ts → src\/domain\/payments\/paymentStates\.ts/);
  }, 120_000);

  it('fails on an import circle', async () => {
    const dir = await plantedTree({
      'src/domain/a.ts': "import { b } from './b';\nexport const a = () => b;\n",
      'src/domain/b.ts': "import { a } from './a';\nexport const b = () => a;\n",
    });
    const run = await depcruise(dir, ['src']);
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/error no-circular: src\/domain\/a\.ts/);
  }, 120_000);

  it('fails when the domain imports a protocol, and when the engine imports the gateway', async () => {
    const dir = await plantedTree({
      ...DOMAIN_MODULE,
      'src/rest/routes.ts': 'export const routes = [];\n',
      'src/domain/payments/__planted.ts': "import { routes } from '../../rest/routes';\nexport const planted = routes;\n",
      'packages/embedded-mongo/src/index.ts': "import { FINAL } from '../../../src/domain/payments/paymentStates';\nexport const planted = FINAL;\n",
    });
    const run = await depcruise(dir, ['src', 'packages']);
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/error domain-imports-no-protocol: src\/domain\/payments\/__planted\.ts → src\/rest\/routes\.ts/);
    expect(run.output).toMatch(/error engine-imports-no-gateway: packages\/embedded-mongo\/src\/index\.ts → src\/domain\/payments\/paymentStates\.ts/);
  }, 120_000);

  it('fails GraphQL importing REST, REST importing GraphQL (both are shells over src/operations), and either importing the dashboard', async () => {
    const dir = await plantedTree({
      'src/rest/routes.ts': "import { schema } from '../graphql/schema';\nexport const routes = [schema];\n",
      'src/graphql/schema.ts': 'export const schema = {};\n',
      'src/graphql/__planted.ts': "import { routes } from '../rest/routes';\nexport const planted = routes;\n",
      // The dashboard is mounted by src/server.ts; its session is the domain's: neither shell imports it.
      'src/dashboard/sessionRouter.ts': "export const SESSION_PATH = '/dashboard/session';\n",
      'src/graphql/__plantedSession.ts': "import { SESSION_PATH } from '../dashboard/sessionRouter';\nexport const planted = SESSION_PATH;\n",
      'src/rest/__plantedSession.ts': "import { SESSION_PATH } from '../dashboard/sessionRouter';\nexport const planted = SESSION_PATH;\n",
    });
    const run = await depcruise(dir, ['src']);
    expect(run.output).toMatch(/error graphql-imports-no-rest: src\/graphql\/__planted\.ts → src\/rest\/routes\.ts/);
    expect(run.output).toMatch(/error rest-imports-no-graphql: src\/rest\/routes\.ts → src\/graphql\/schema\.ts/);
    expect(run.output).toMatch(/error no-protocol-imports-dashboard: src\/graphql\/__plantedSession\.ts → src\/dashboard\/sessionRouter\.ts/);
    expect(run.output).toMatch(/error no-protocol-imports-dashboard: src\/rest\/__plantedSession\.ts → src\/dashboard\/sessionRouter\.ts/);
    expect(run.code, run.output).not.toBe(0);
  }, 120_000);

  it('fails the operations layer importing Express or src/http: it runs operations for every transport', async () => {
    const dir = await plantedTree({
      'src/http/body.ts': 'export const readJsonBody = () => undefined;\n',
      'src/operations/__planted.ts': "import { readJsonBody } from '../http/body';\nexport const planted = readJsonBody;\n",
    });
    const run = await depcruise(dir, ['src']);
    expect(run.output).toMatch(/error operations-imports-no-http: src\/operations\/__planted\.ts → src\/http\/body\.ts/);
    expect(run.code, run.output).not.toBe(0);
  }, 120_000);
});
