import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../../test/support/accounts';
import { manifestParts } from '../src/commands/documents';
import { usePgwGateway } from './support/gateway';
import { runPgw } from './support/pgw';

const gw = usePgwGateway();
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function manifestFile(content: unknown): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'pgw-documents-')), 'manifest.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** `pgw documents push FILE`: a manifest's operations registered as trusted documents, in parts. */
describe('pgw documents push', () => {
  const args = (sk: string, ...more: string[]) => ['documents', 'push', ...more, '--api-key', sk, '--base-url', gw.baseUrl];

  it('registers a client preset map larger than one request body, in parts, and lists the documents', async () => {
    const account = await createAccount(gw.baseUrl);
    // 300 documents of ~500 bytes: ~150 KB, more than the gateway's 64 KiB body limit.
    const texts = Array.from({ length: 300 }, (_, i) => `query Op${i} { account { id name } } # ${'x'.repeat(450)}`);
    const file = await manifestFile(Object.fromEntries(texts.map((t) => [sha256(t), t])));
    expect(manifestParts(JSON.stringify(Object.fromEntries(texts.map((t) => [sha256(t), t]))), 'm').length).toBeGreaterThan(2);
    const res = await runPgw(args(account.sk, file), gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('300 trusted documents registered');
    expect(res.stdout).toContain(`sha256:${sha256(texts[0]!)}  query  Op0`);
    const listed = await account.api.get('/graphql/documents?limit=100');
    expect(listed.body.data).toHaveLength(100);
    expect(listed.body.has_more).toBe(true);
    // Again: nothing changes (--json prints the answer).
    const again = await runPgw(args(account.sk, file, '--json'), gw.config.env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).data).toHaveLength(300);
  });

  it('registers an Apollo manifest', async () => {
    const account = await createAccount(gw.baseUrl);
    const body = 'query Me { account { id } }';
    const file = await manifestFile({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(body), name: 'Me', type: 'query', body }] });
    const res = await runPgw(args(account.sk, file), gw.config.env);
    expect(res.code, res.stderr).toBe(0);
    expect((await account.api.get('/graphql/documents')).body.data.map((d: any) => d.name)).toEqual(['Me']);
  });

  it('exits 2 on a file that is no manifest, 1 with the code when the gateway refuses a document', async () => {
    const account = await createAccount(gw.baseUrl);
    for (const content of ['not json', '[]', '{}', { a: 1 }]) {
      const res = await runPgw(args(account.sk, await manifestFile(content)), gw.config.env);
      expect(res.code, res.stderr).toBe(2);
    }
    expect((await runPgw(args(account.sk, '/nonexistent/manifest.json'), gw.config.env)).code).toBe(2);
    const refused = await runPgw(args(account.sk, await manifestFile({ [sha256('a')]: 'query B { account { id } }' })), gw.config.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: invalid_request:');
    expect((await account.api.get('/graphql/documents')).body.data).toEqual([]);
  });
});
