/**
 * Issue 16 item 4: every write the gateway sends asks for w: "majority". On a replica set whose
 * implicit default is w: 1 (one with an arbiter), a write acknowledged by the primary alone can be
 * rolled back by a failover, an idempotency record among them. Watched with the driver's own command
 * monitoring on the gateway's connection, so it holds on the embedded engine and a real MongoDB alike.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';

// The gateway uses no transactions; a commitTransaction would be held to the same rule (the driver
// puts the write concern there, not on the statements inside).
const WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'commitTransaction']);

interface SentWrite {
  name: string;
  collection: string;
  writeConcern: unknown;
  /** How many documents or statements it carries (a batch carries several). */
  size: number;
}

const sent: SentWrite[] = [];
let server: TestServer;
// Command monitoring must be on when the client is created: the query-shape recorder's variable is
// what turns it on for the gateway's connection (it records into a throw-away directory here).
const shapesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'write-concern-shapes-'));

beforeAll(async () => {
  process.env.PGW_QUERY_SHAPES = shapesDir;
  server = await startTestServer();
  mongoose.connection.getClient().on('commandStarted', (e) => {
    if (!WRITES.has(e.commandName)) return;
    const cmd = e.command as Record<string, unknown>;
    const items = (cmd.documents ?? cmd.updates ?? cmd.deletes) as unknown[] | undefined;
    sent.push({
      name: e.commandName,
      collection: String(cmd[e.commandName]),
      writeConcern: cmd.writeConcern,
      size: items?.length ?? 1,
    });
  });
});

afterAll(async () => {
  await server?.stop();
  delete process.env.PGW_QUERY_SHAPES;
  fs.rmSync(shapesDir, { recursive: true, force: true });
});

describe('write concern of what the gateway writes', () => {
  it('asks for w: "majority" on every write, batched ones included', async () => {
    const account = await createAccount(server.baseUrl);
    // Concurrent creations, so the batched inserts (events, timers) carry several documents.
    const created = await Promise.all(
      Array.from({ length: 4 }, () =>
        account.api.post(
          '/payment_intents',
          { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
          { idempotencyKey: idempotencyKey() },
        ),
      ),
    );
    expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const hook = await account.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' });
    expect(hook.status).toBe(201);
    await account.api.get('/payment_intents');
    // The request log is written in the background: wait until it has been.
    await waitFor(async () => sent.filter((w) => w.collection === 'request_logs').length, (n) => n > 0);

    // Raw commands of src/db/batching.ts (events, timers: several documents each) and driver/mongoose
    // operations (accounts, keys, rate limits: findAndModify) alike.
    expect(sent.some((w) => w.collection === 'events' && w.name === 'insert' && w.size > 1)).toBe(true);
    expect(sent.some((w) => w.collection === 'accounts' && w.name === 'insert')).toBe(true);
    expect(sent.some((w) => w.name === 'findAndModify')).toBe(true);
    const without = sent.filter((w) => (w.writeConcern as { w?: unknown } | undefined)?.w !== 'majority');
    expect(without).toEqual([]);
  });
});
