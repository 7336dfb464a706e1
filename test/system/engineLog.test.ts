import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { ApiClient } from '../support/client';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { waitFor } from '../support/wait';

/**
 * The embedded engine's own lines reach the gateway's JSON log (src/db/embeddedEngine.ts): its
 * routine lines at info, anything else (here: a data directory others could read, made owner-only)
 * as a warning an operator sees. Before, the in-process engine wrote them nowhere.
 */
const dirs: string[] = [];
const gateways: GatewayProcess[] = [];
afterAll(async () => {
  for (const g of gateways) await g.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const lines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });

describe("the embedded engine's log lines", () => {
  it('says at info what a restart loaded, and warns of what it changed on disk', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'pgw-engine-log-'));
    dirs.push(dataDir);
    const env = { MONGODB_URI: '', DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    const first = await spawnGateway('', env);
    const account = await createAccount(first.url, 'engine log');
    const created = await account.api.post(
      '/payment_intents',
      { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
      { idempotencyKey: idempotencyKey() },
    );
    expect(created.status).toBe(201);
    await first.stop();

    await chmod(dataDir, 0o755);
    const second = await spawnGateway('', env);
    gateways.push(second);
    const logged = await waitFor(async () => lines(second.output()), (ls) => ls.some((l) => l.msg === 'embedded db: data loaded'), 20_000);
    const loaded = logged.find((l) => l.msg === 'embedded db: data loaded')!;
    expect(loaded.level).toBe(30);
    expect(loaded.documents).toEqual(expect.any(Number));
    expect(loaded.documents as number).toBeGreaterThan(0);
    const owner = logged.find((l) => l.msg === 'embedded db: made the data directory owner-only (it was readable by others)');
    expect(owner, second.output()).toMatchObject({ level: 40, dataDir });
    // What it loaded is served.
    expect((await new ApiClient(second.url, account.sk).get(`/payment_intents/${created.body.id}`)).status).toBe(200);
  }, 120_000);
});
