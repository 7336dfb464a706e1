/**
 * When the engine answers a write: `{ w: 1 }` once applied (as a MongoDB primary answers it, before the
 * journal commit), anything else once durable; change events only once durable, in journal order.
 * The journal is held open here by wrapping its append, so "answered before it landed" is observed,
 * not timed. Engine internals: nothing to run against MONGODB_URI.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine';
import { runCommand, writeAcknowledgement } from '../src/commands/index';
import type { ServerInfo } from '../src/commands/context';
import type { ChangeDraft } from '../src/changeStreams';
import type { Doc } from '../src/values';
import { tempDirs } from './helpers';

const tempDir = tempDirs('embedded-ack-');
const server: ServerInfo = { hostPort: 'localhost:0', setName: 'rs0', processId: 1, connectionId: 1, sleep: async () => {} };

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

/** An engine on a data directory whose journal answers no append until `release()`. */
function heldEngine(): { engine: Engine; release: () => void; published: unknown[] } {
  const e = new Engine({ dataDir: tempDir() });
  e.open();
  const journal = (e as unknown as { journal: { append(ops: unknown[]): Promise<void> } }).journal;
  const append = journal.append.bind(journal);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  journal.append = (ops) => {
    const landed = append(ops);
    return gate.then(() => landed);
  };
  const published: unknown[] = [];
  const publish = e.changes.publish.bind(e.changes);
  e.changes.publish = (drafts: ChangeDraft[]) => {
    published.push(...drafts.map((d) => d.id));
    publish(drafts);
  };
  engine = e;
  return { engine: e, release, published };
}

/** Whether `p` has settled once pending callbacks and I/O have had their turn. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

const insert = (id: number, writeConcern?: Doc): Doc => ({ insert: 'c', documents: [{ _id: id }], ...(writeConcern ? { writeConcern } : {}) });

describe('write acknowledgement', () => {
  it('is "applied" for w: 1 and w: 0 without j: true, "durable" otherwise', () => {
    expect(writeAcknowledgement(insert(1, { w: 1 }))).toBe('applied');
    expect(writeAcknowledgement(insert(1, { w: 0 }))).toBe('applied');
    expect(writeAcknowledgement(insert(1, { w: 1, j: true }))).toBe('durable');
    expect(writeAcknowledgement(insert(1, { w: 'majority' }))).toBe('durable');
    expect(writeAcknowledgement(insert(1, { w: 2 }))).toBe('durable');
    expect(writeAcknowledgement(insert(1))).toBe('durable');
  });

  it('answers w: 1 before the journal lands and w: "majority" after; change events wait for the journal, in order', async () => {
    const { engine: e, release, published } = heldEngine();
    const applied = runCommand(e, 'db', insert(1, { w: 1 }), server);
    expect(await settled(applied)).toBe(true);
    expect((await applied).n).toBe(1);
    const durable = runCommand(e, 'db', insert(2, { w: 'majority' }), server);
    const unconcerned = runCommand(e, 'db', insert(3), server);
    expect(await settled(durable)).toBe(false);
    expect(await settled(unconcerned)).toBe(false);
    // Applied means visible to readers already.
    const found = await runCommand(e, 'db', { find: 'c', filter: {} }, server);
    expect((found.cursor as { firstBatch: Doc[] }).firstBatch.map((d) => d._id)).toEqual([1, 2, 3]);
    expect(published).toEqual([]);

    release();
    expect((await durable).n).toBe(1);
    expect((await unconcerned).n).toBe(1);
    expect(published).toEqual([1, 2, 3]);
  });

  it('answers a w: 1 findAndModify once applied, with the document after the change', async () => {
    const { engine: e, release } = heldEngine();
    const counted = runCommand(e, 'db', { findAndModify: 'seq', query: { _id: 'a' }, update: { $inc: { v: 5 } }, upsert: true, new: true, writeConcern: { w: 1 } }, server);
    expect(await settled(counted)).toBe(true);
    expect(((await counted).value as Doc).v).toBe(5);
    release();
  });
});
