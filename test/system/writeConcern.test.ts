/**
 * Issue 16 item 4: every write the gateway sends asks for w: "majority" (with a wtimeout). On a replica set whose
 * implicit default is w: 1 (one with an arbiter), a write acknowledged by the primary alone can be
 * rolled back by a failover, an idempotency record among them. Watched with the driver's own command
 * monitoring on the gateway's connection, so it holds on the embedded engine and a real MongoDB alike.
 *
 * The exceptions ask for w: 1 (APPLIED_WRITE_CONCERN, docs/operations.md): writes whose loss is harmless
 * and whose durability a later durable write implies. They are listed here by collection and command, so
 * that a new one is a decision made in this file too; the writes that commit a request (a payment's
 * insert, an idempotency record's answer, a webhook delivery, an endpoint) stay w: "majority".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';
import { WRITE_CONCERN } from '../../src/db/writeConcern';

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

/** The (collection, command) pairs that may ask for w: 1, and why (each call site says more). */
const APPLIED: Record<string, string> = {
  'rate_limits findAndModify': 'a request count',
  'accounts findAndModify': "a key's request count in its account",
  'sequences findAndModify': 'a counter reservation',
  'idempotency_keys insert': "a key's claim, answered only after a later durable write",
  'events insert': 'an event copied out of its outbox',
  'events update': 'a hooks-done mark',
  'timers insert': 'a timer scheduled out of its outbox',
  'timers update': "a timer's claim or done mark",
  'payment_intents update': "an outbox's clearing",
  'webhook_deliveries insert': "a delivery, whose attempt's durable recording follows (at-least-once delivery)",
  'overview_payment_rollups update': "an overview count's $inc (rebuildRollups recomputes a lost one)",
  'overview_webhook_rollups update': "an overview count's $inc (rebuildRollups recomputes a lost one)",
};

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
  it('asks for w: "majority" on every write, batched ones included, but for the listed w: 1 kinds', async () => {
    const account = await createAccount(server.baseUrl);
    // Concurrent creations, so that the batched inserts (events, timers) carry several documents: those
    // that land in the same turn are batched, which depends on how fast each is served, so rounds of
    // them go on until one batch of events has carried several (at most 20 rounds).
    const batchedEvents = () => sent.some((w) => w.collection === 'events' && w.name === 'insert' && w.size > 1);
    for (let round = 0; round < 20 && !batchedEvents(); round++) {
      const created = await Promise.all(
        Array.from({ length: 8 }, () =>
          account.api.post(
            '/payment_intents',
            { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' } },
            { idempotencyKey: idempotencyKey() },
          ),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
    }
    const hook = await account.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hook' });
    expect(hook.status).toBe(201);
    await account.api.get('/payment_intents');
    // The request log is written in the background: wait until it has been.
    await waitFor(async () => sent.filter((w) => w.collection === 'request_log_batches').length, (n) => n > 0);

    // Raw commands of src/db/batching.ts (events, timers: several documents each) and driver/mongoose
    // operations (accounts, keys, rate limits: findAndModify) alike.
    expect(batchedEvents()).toBe(true);
    expect(sent.some((w) => w.collection === 'accounts' && w.name === 'insert')).toBe(true);
    expect(sent.some((w) => w.name === 'findAndModify')).toBe(true);
    const majority = (w: SentWrite) => JSON.stringify(w.writeConcern) === JSON.stringify(WRITE_CONCERN);
    const applied = (w: SentWrite) => JSON.stringify(w.writeConcern) === JSON.stringify({ w: 1 });
    // Every write asks for one of the two, and w: 1 only where listed.
    expect(sent.filter((w) => !majority(w) && !(applied(w) && `${w.collection} ${w.name}` in APPLIED))).toEqual([]);
    // The writes that commit a request stay durable.
    for (const commit of ['payment_intents insert', 'idempotency_keys update', 'webhook_endpoints insert', 'accounts insert']) {
      const writes = sent.filter((w) => `${w.collection} ${w.name}` === commit);
      expect(writes.length, commit).toBeGreaterThan(0);
      expect(writes.filter((w) => !majority(w)), commit).toEqual([]);
    }
    // And the listed kinds are really sent with w: 1 (the list is not stale).
    for (const kind of ['accounts findAndModify', 'sequences findAndModify', 'idempotency_keys insert', 'events insert', 'timers insert', 'overview_payment_rollups update']) {
      expect(sent.some((w) => `${w.collection} ${w.name}` === kind && applied(w)), kind).toBe(true);
    }
  });
});
