/**
 * Change stream cursors run a leading `$match` as one compiled query and skip events whose
 * operationType that `$match` starts by excluding; waiting getMores are woken only by changes in
 * their namespace. Neither may change what a stream returns: here every pipeline is compared with
 * the same pipeline behind a no-op first stage (`$skip: 0`), which mingo's Aggregator runs whole.
 */
import { Timestamp } from 'bson';
import { describe, expect, it } from 'vitest';
import { ChangeLog, ChangeStreamCursor, type ChangeDraft, type ChangeStreamOptions } from '../src/changeStreams';
import type { Doc } from '../src/values';

function log(): ChangeLog {
  let i = 0;
  return new ChangeLog(() => new Timestamp({ t: 1_700_000_000, i: ++i }));
}

const DRAFTS: ChangeDraft[] = [
  { op: 'insert', db: 'db', coll: 'c', id: 1, after: { _id: 1, x: 1, origin: 'p1' } },
  { op: 'insert', db: 'db', coll: 'other', id: 9, after: { _id: 9, x: 9 } },
  { op: 'insert', db: 'db', coll: 'c', id: 2, after: { _id: 2, x: 5, origin: 'p2' } },
  { op: 'update', db: 'db', coll: 'c', id: 1, before: { _id: 1, x: 1, origin: 'p1' }, after: { _id: 1, x: 3, origin: 'p1' } },
  { op: 'replace', db: 'db', coll: 'c', id: 2, before: { _id: 2, x: 5 }, after: { _id: 2, x: 7 } },
  { op: 'insert', db: 'db2', coll: 'c', id: 3, after: { _id: 3, x: 4 } },
  { op: 'delete', db: 'db', coll: 'c', id: 1, before: { _id: 1, x: 3 } },
  { op: 'insert', db: 'db', coll: 'c', id: 4, after: { _id: 4, x: 8, origin: 'p2' } },
  { op: 'drop', db: 'db', coll: 'c' },
  { op: 'insert', db: 'db', coll: 'c', id: 5, after: { _id: 5, x: 2 } },
];

const PIPELINES: Doc[][] = [
  [],
  [{ $match: { operationType: 'insert' } }],
  [{ $match: { operationType: 'insert', 'fullDocument.origin': { $ne: 'p1' } } }],
  [{ $match: { operationType: 'update', 'fullDocument.x': { $gt: 1 } } }],
  [{ $match: { 'fullDocument.x': { $gt: 1 }, operationType: 'insert' } }],
  [{ $match: { operationType: { $in: ['insert', 'delete'] } } }],
  [{ $match: { operationType: 'update' } }, { $project: { operationType: 1, 'updateDescription.updatedFields': 1 } }],
  [{ $match: { operationType: 'insert' } }, { $match: { 'fullDocument.x': { $gte: 5 } } }],
  [{ $project: { operationType: 1, documentKey: 1 } }],
];

function options(over: Partial<ChangeStreamOptions> = {}): ChangeStreamOptions {
  return { db: 'db', coll: 'c', allChangesForCluster: false, fullDocument: 'default', fullDocumentBeforeChange: 'off', showExpandedEvents: false, ...over };
}

/** Everything the stream returns, a few events per call as getMore reads them. */
function readAll(l: ChangeLog, opts: ChangeStreamOptions, stages: Doc[]): Doc[] {
  const cursor = new ChangeStreamCursor(l, opts, stages, 0, () => undefined);
  const out: Doc[] = [];
  for (let i = 0; i < 20 && !cursor.invalidated; i++) out.push(...cursor.next(2));
  return out;
}

describe('change stream pipelines', () => {
  for (const stages of PIPELINES) {
    for (const opts of [options(), options({ coll: undefined }), options({ allChangesForCluster: true, fullDocumentBeforeChange: 'whenAvailable' })]) {
      it(`${JSON.stringify(stages)} on ${opts.allChangesForCluster ? 'the cluster' : opts.coll ? 'a collection' : 'a database'}`, () => {
        const l = log();
        l.publish(DRAFTS.map((d) => ({ ...d })));
        const expected = readAll(l, opts, [{ $skip: 0 }, ...stages]);
        expect(readAll(l, opts, stages)).toEqual(expected);
      });
    }
  }

  it('still fails on a bad $match at the first event in scope, whatever its type', () => {
    const l = log();
    l.publish([{ op: 'update', db: 'db', coll: 'c', id: 1, before: { _id: 1 }, after: { _id: 1, x: 1 } }]);
    const bad = [{ $match: { operationType: 'insert', x: { $noSuchOperator: 1 } } }];
    expect(() => new ChangeStreamCursor(l, options(), bad, 0, () => undefined).next(10)).toThrow();
    expect(() => new ChangeStreamCursor(l, options(), [{ $skip: 0 }, ...bad], 0, () => undefined).next(10)).toThrow();
  });
});

describe('waiting for changes', () => {
  it('wakes a waiter only for changes it wants; wakeAll wakes everyone', async () => {
    const l = log();
    const woken: string[] = [];
    const wait = (name: string, wanted?: (d: ChangeDraft) => boolean) => l.waitForEvents(5_000, wanted).then(() => woken.push(name));
    const onC = wait('c', (d) => d.coll === 'c');
    const onAny = wait('any');
    const onD = wait('d', (d) => d.coll === 'd');
    l.publish([{ op: 'insert', db: 'db', coll: 'other', id: 1, after: { _id: 1 } }]);
    await onAny;
    l.publish([{ op: 'insert', db: 'db', coll: 'other', id: 2, after: { _id: 2 } }, { op: 'insert', db: 'db', coll: 'c', id: 3, after: { _id: 3 } }]);
    await onC;
    expect(woken).toEqual(['any', 'c']);
    l.wakeAll();
    await onD;
    expect(woken).toEqual(['any', 'c', 'd']);
  });

  it('a stream left asleep still moves past the changes it did not want', () => {
    const l = log();
    const cursor = new ChangeStreamCursor(l, options(), [], 0, () => undefined);
    l.publish([{ op: 'insert', db: 'db', coll: 'other', id: 1, after: { _id: 1 } }]);
    expect(cursor.inScope({ op: 'insert', db: 'db', coll: 'other' })).toBe(false);
    expect(cursor.next(10)).toEqual([]);
    expect(cursor.position).toBe(l.headSeq);
  });
});
