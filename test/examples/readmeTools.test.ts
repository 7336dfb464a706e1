import { describe, expect, it } from 'vitest';
import { useGateway } from '../../packages/client/test/support';
import { readmeBlock, runTsSnippet } from './readmeSnippets';

describe('README "Tools": the snippets run as written', () => {
  const gw = useGateway();

  it('@pgw/client: creates an account and an express payment, and catches a 404 as PgwError', async () => {
    const out = await runTsSnippet(readmeBlock('### @pgw/client (typed REST client)'), { PGW_BASE_URL: gw.server.baseUrl }, 'client');
    expect(out).toMatch(/^pay_[0-9A-Za-z]{24} PENDING$/m);
    expect(out).toMatch(/^404 resource_not_found req_[0-9A-Za-z]+$/m);
  });
});
