/**
 * serverStatus's command counters (`opcounters`, `metrics.commands`) with MongoDB's meaning, which
 * `npm run bench` reads for commands and writes per request. The same assertions hold on a real MongoDB
 * (MONGODB_URI): they check the deltas of what this file did, with `>=` only where a server counts
 * commands of its own meanwhile (the driver's monitoring `hello`, background tasks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from 'mongodb';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
let db: Db;

beforeAll(async () => {
  t = await startTestDb('serverstatus');
  db = t.conn.db!;
  await db.createCollection('counted');
});
afterAll(async () => {
  await t.close();
});

interface Counters {
  opcounters: Record<'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command', number>;
  commands: Record<string, { total: number; failed: number } | undefined>;
}

async function counters(): Promise<Counters> {
  const s = await db.admin().command({ serverStatus: 1 });
  const opcounters = Object.fromEntries(Object.entries(s.opcounters as Record<string, unknown>).map(([k, v]) => [k, Number(v)]));
  const commands = Object.fromEntries(
    Object.entries(s.metrics.commands as Record<string, any>)
      .filter(([, v]) => typeof v === 'object' && v !== null && 'total' in v)
      .map(([k, v]) => [k, { total: Number(v.total), failed: Number(v.failed) }]),
  );
  return { opcounters: opcounters as Counters['opcounters'], commands };
}

const total = (c: Counters, name: string) => c.commands[name]?.total ?? 0;
const failed = (c: Counters, name: string) => c.commands[name]?.failed ?? 0;

describe('serverStatus command counters', () => {
  it('counts documents inserted, finds, update statements and other commands', async () => {
    const coll = db.collection<{ _id: number; n: number }>('counted');
    const before = await counters();
    await coll.insertMany([
      { _id: 1, n: 1 },
      { _id: 2, n: 2 },
      { _id: 3, n: 3 },
    ]);
    expect(await coll.find({}).toArray()).toHaveLength(3);
    // One update command of two statements.
    const updated = await coll.bulkWrite([
      { updateOne: { filter: { _id: 1 }, update: { $inc: { n: 10 } } } },
      { updateOne: { filter: { _id: 2 }, update: { $inc: { n: 10 } } } },
    ]);
    expect(updated.modifiedCount).toBe(2);
    expect(await coll.findOneAndUpdate({ _id: 3 }, { $inc: { n: 10 } }, { returnDocument: 'after' })).toMatchObject({ n: 13 });
    const after = await counters();

    const op = (k: keyof Counters['opcounters']) => after.opcounters[k] - before.opcounters[k];
    expect(op('insert')).toBe(3); // documents, not insert commands
    expect(op('query')).toBe(1);
    expect(op('update')).toBe(2); // statements; findAndModify counts as a command
    expect(op('delete')).toBe(0);
    expect(op('getmore')).toBe(0);
    // findAndModify and the second serverStatus (a command is counted before it runs, so a reading
    // includes itself), plus whatever the server ran meanwhile.
    expect(op('command')).toBeGreaterThanOrEqual(2);

    expect(total(after, 'insert') - total(before, 'insert')).toBe(1);
    expect(total(after, 'find') - total(before, 'find')).toBe(1);
    expect(total(after, 'update') - total(before, 'update')).toBe(1);
    expect(total(after, 'findAndModify') - total(before, 'findAndModify')).toBe(1);
    expect(total(after, 'serverStatus') - total(before, 'serverStatus')).toBeGreaterThanOrEqual(1);
    for (const name of ['insert', 'find', 'update', 'findAndModify']) expect(failed(after, name) - failed(before, name)).toBe(0);
  });

  it('counts a failed command as failed, and a statement that fails as attempted', async () => {
    const coll = db.collection<{ _id: number; n: number }>('counted');
    const before = await counters();
    // A duplicate _id: a write error, not a failed command; the ordered insert stops after it.
    await expect(coll.insertMany([{ _id: 100, n: 0 }, { _id: 100, n: 0 }, { _id: 101, n: 0 }])).rejects.toThrow();
    await expect(db.command({ count: 'counted', query: { $nope: 1 } })).rejects.toThrow();
    const after = await counters();

    expect(after.opcounters.insert - before.opcounters.insert).toBe(2);
    expect(total(after, 'insert') - total(before, 'insert')).toBe(1);
    expect(failed(after, 'insert') - failed(before, 'insert')).toBe(0);
    expect(total(after, 'count') - total(before, 'count')).toBe(1);
    expect(failed(after, 'count') - failed(before, 'count')).toBe(1);
  });
});
