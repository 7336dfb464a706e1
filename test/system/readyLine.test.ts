import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { waitFor } from '../support/wait';
import { printReadyLine } from '../../src/readyLine';

/** `npm run dev`'s entry (src/main.ts) prints one human line once it serves, besides its JSON logs. */
let engine: EngineProcess;
const gateways: GatewayProcess[] = [];
beforeAll(async () => {
  engine = await spawnEngine();
}, 120_000);
afterAll(async () => {
  for (const g of gateways) await g.stop();
  await engine?.kill();
});

describe('the ready line', () => {
  it('names the dashboard, docs and GraphQL at PUBLIC_BASE_URL, once, among JSON log lines', async () => {
    const gateway = await spawnGateway(engine.uri, { LOG_LEVEL: 'info', PUBLIC_BASE_URL: 'https://pay.example:8443/' });
    gateways.push(gateway);
    const output = await waitFor(async () => gateway.output(), (o) => o.includes('Gateway ready'), 20_000);
    const lines = output.split('\n').filter((l) => l.trim() !== '');
    const human = lines.filter((l) => !l.startsWith('{'));
    expect(human).toEqual([
      'Gateway ready: dashboard https://pay.example:8443/dashboard · docs https://pay.example:8443/docs · GraphQL https://pay.example:8443/graphql',
    ]);
    // The rest is the JSON log stream, untouched.
    expect(lines.some((l) => l.startsWith('{') && JSON.parse(l).msg?.startsWith('gateway listening'))).toBe(true);
  });

  it('says nothing with LOG_LEVEL=silent', async () => {
    const gateway = await spawnGateway(engine.uri, { LOG_LEVEL: 'silent' });
    gateways.push(gateway);
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    expect(gateway.output()).not.toContain('Gateway ready');
  });
});

describe('printReadyLine', () => {
  it('writes the line at any level but silent, with one slash before each path', () => {
    const written: string[] = [];
    for (const level of ['info', 'warn', 'silent']) printReadyLine('http://localhost:3000/', level, (t) => written.push(`${level}: ${t}`));
    expect(written).toEqual([
      'info: Gateway ready: dashboard http://localhost:3000/dashboard · docs http://localhost:3000/docs · GraphQL http://localhost:3000/graphql\n',
      'warn: Gateway ready: dashboard http://localhost:3000/dashboard · docs http://localhost:3000/docs · GraphQL http://localhost:3000/graphql\n',
    ]);
  });
});
