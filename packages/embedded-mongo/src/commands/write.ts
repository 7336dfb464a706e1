/**
 * insert / update / delete. Each statement is applied atomically; failures are reported in
 * `writeErrors` with the statement index, stopping at the first one when `ordered`.
 */
import { ObjectId } from 'bson';
import type { Collection } from '../collection';
import { MongoCommandError, badValue } from '../errors';
import { parseSort, runQuery } from '../query';
import { applyUpdate, buildUpsertDoc, isReplacement } from '../update';
import { deepEqual, isPlainObject, type Doc } from '../values';
import { collectionName, type CommandContext, type Handler } from './context';

function statements(c: CommandContext, field: string): Doc[] {
  const v = c.cmd[field];
  if (!Array.isArray(v)) throw badValue(`'${field}' must be an array`);
  return v as Doc[];
}

/**
 * Runs statements in order, collecting write errors; non-MongoDB errors become BadValue. Each statement
 * attempted counts in serverStatus's `opcounters.<kind>`, failed or not, as on MongoDB.
 */
async function runStatements(
  c: CommandContext,
  kind: 'insert' | 'update' | 'delete',
  items: Doc[],
  fn: (item: Doc, index: number) => Promise<void>,
): Promise<Doc[]> {
  const ordered = c.cmd.ordered !== false;
  const writeErrors: Doc[] = [];
  const opcounters = c.engine.counters.opcounters;
  for (let i = 0; i < items.length; i++) {
    opcounters[kind]++;
    try {
      await fn(items[i]!, i);
    } catch (e) {
      const err = e instanceof MongoCommandError ? e : badValue(e instanceof Error ? e.message : String(e));
      writeErrors.push(err.toWriteError(i));
      if (ordered) break;
    }
  }
  return writeErrors;
}

function withId(doc: Doc): Doc {
  if (doc._id !== undefined) {
    if (Object.keys(doc)[0] === '_id') return doc;
    const { _id, ...rest } = doc;
    return { _id, ...rest };
  }
  return { _id: new ObjectId(), ...doc };
}

async function insert(c: CommandContext): Promise<Doc> {
  const name = collectionName(c);
  const docs = statements(c, 'documents');
  const coll = c.engine.ensureCollection(c.op, c.db, name);
  let n = 0;
  const writeErrors = await runStatements(c, 'insert', docs, async (raw) => {
    if (!isPlainObject(raw)) throw badValue('document to insert must be an object');
    const doc = withId(raw);
    await c.engine.retryLocked(() => c.engine.insertDoc(c.op, coll, doc));
    n++;
  });
  return writeErrors.length ? { n, writeErrors, ok: 1 } : { n, ok: 1 };
}

async function update(c: CommandContext): Promise<Doc> {
  const name = collectionName(c);
  const specs = statements(c, 'updates');
  let coll: Collection | undefined = c.engine.getCollection(c.db, name);
  let n = 0;
  let nModified = 0;
  const upserted: Doc[] = [];
  const writeErrors = await runStatements(c, 'update', specs, async (spec, index) => {
    const filter = isPlainObject(spec.q) ? spec.q : {};
    const u = spec.u;
    if (!isPlainObject(u) && !Array.isArray(u)) throw badValue('update must be an object or pipeline');
    if (spec.arrayFilters !== undefined) throw badValue('arrayFilters are not supported by the embedded engine');
    const multi = spec.multi === true;
    if (multi && isReplacement(u)) throw badValue('multi update is not supported for replacement-style update');
    await c.engine.retryLocked(() => {
      const matches = coll ? runQuery(coll, { filter, limit: multi ? 0 : 1, sort: parseSort(spec.sort) }) : [];
      if (matches.length === 0) {
        if (spec.upsert !== true) return;
        coll ??= c.engine.ensureCollection(c.op, c.db, name);
        const doc = buildUpsertDoc(filter, u);
        c.engine.insertDoc(c.op, coll, doc);
        upserted.push({ index, _id: doc._id });
        n++;
        return;
      }
      c.engine.checkUnlocked(c.op, coll!, matches);
      const kind = isReplacement(u) ? 'replace' : 'update';
      for (const m of matches) {
        const after = applyUpdate(m, u, { filter, isInsert: false });
        n++;
        if (!deepEqual(m, after)) {
          c.engine.replaceDoc(c.op, coll!, m, after, kind);
          nModified++;
        }
      }
    });
  });
  const reply: Doc = { n, nModified };
  if (upserted.length) reply.upserted = upserted;
  if (writeErrors.length) reply.writeErrors = writeErrors;
  reply.ok = 1;
  return reply;
}

async function remove(c: CommandContext): Promise<Doc> {
  const name = collectionName(c);
  const specs = statements(c, 'deletes');
  const coll = c.engine.getCollection(c.db, name);
  let n = 0;
  const writeErrors = await runStatements(c, 'delete', specs, async (spec) => {
    if (!coll) return;
    const filter = isPlainObject(spec.q) ? spec.q : {};
    const limit = Number(spec.limit ?? 0) === 1 ? 1 : 0;
    await c.engine.retryLocked(() => {
      const matches = runQuery(coll, { filter, limit });
      c.engine.checkUnlocked(c.op, coll, matches);
      for (const m of matches) {
        c.engine.deleteDoc(c.op, coll, m);
        n++;
      }
    });
  });
  return writeErrors.length ? { n, writeErrors, ok: 1 } : { n, ok: 1 };
}

export const writeCommands: Record<string, Handler> = { insert, update, delete: remove };
