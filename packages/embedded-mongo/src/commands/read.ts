/** find / getMore / killCursors / count / distinct. */
import { Long } from 'bson';
import { ErrorCodes, MongoCommandError, badValue } from '../errors';
import { applyProjection, compileProjection } from '../projection';
import { parseSort, runQuery } from '../query';
import { canonicalKey, getPathValues, isPlainObject, type Doc } from '../values';
import { collectionName, cursorReply, optionalNumber, takeBatch, type CommandContext, type Handler } from './context';

function find(c: CommandContext): Doc {
  const name = collectionName(c);
  const ns = `${c.db}.${name}`;
  const coll = c.engine.getCollection(c.db, name);
  const filter = isPlainObject(c.cmd.filter) ? c.cmd.filter : undefined;
  const sort = parseSort(c.cmd.sort);
  const rawLimit = optionalNumber(c.cmd.limit) ?? 0;
  const docs = coll
    ? runQuery(coll, { filter, sort, skip: optionalNumber(c.cmd.skip), limit: Math.abs(rawLimit) })
    : [];
  const proj = compileProjection(c.cmd.projection);
  const transform = proj ? (d: Doc) => applyProjection(d, proj) : undefined;
  const singleBatch = c.cmd.singleBatch === true || rawLimit < 0;
  return cursorReply(c, ns, docs, optionalNumber(c.cmd.batchSize), transform, singleBatch);
}

async function getMore(c: CommandContext): Promise<Doc> {
  const id = c.cmd.getMore;
  const cursor = c.engine.cursors.get(id);
  if (!cursor) {
    throw new MongoCommandError(ErrorCodes.CursorNotFound, `cursor id ${String(id)} not found`);
  }
  const batchSize = optionalNumber(c.cmd.batchSize);
  const idLong = Long.isLong(id) ? id : Long.fromNumber(Number(id));
  if (cursor.kind === 'docs') {
    const max = batchSize && batchSize > 0 ? batchSize : Number.MAX_SAFE_INTEGER;
    const { batch, next } = takeBatch(cursor.docs, cursor.pos, max, cursor.transform);
    cursor.pos = next;
    const done = next >= cursor.docs.length;
    if (done) c.engine.cursors.kill(id);
    return { cursor: { nextBatch: batch, id: done ? Long.ZERO : idLong, ns: cursor.ns }, ok: 1 };
  }
  // Change stream: return what is there, or wait up to maxTimeMS for something to arrive.
  const max = batchSize && batchSize > 0 ? batchSize : 1000;
  const wait = optionalNumber(c.cmd.maxTimeMS) ?? 1000;
  const deadline = Date.now() + wait;
  cursor.busy = true;
  try {
    let batch = cursor.stream.next(max);
    while (batch.length === 0 && !cursor.stream.invalidated && Date.now() < deadline) {
      await c.engine.changes.waitForEvents(deadline - Date.now(), (d) => cursor.stream.inScope(d));
      if (!c.engine.cursors.get(id)) break; // killed while waiting
      batch = cursor.stream.next(max);
    }
    const closed = cursor.stream.invalidated;
    if (closed) c.engine.cursors.kill(id);
    return {
      cursor: {
        nextBatch: batch,
        postBatchResumeToken: cursor.stream.resumeToken,
        id: closed ? Long.ZERO : idLong,
        ns: cursor.ns,
      },
      ok: 1,
    };
  } finally {
    cursor.busy = false;
  }
}

function killCursors(c: CommandContext): Doc {
  const ids = Array.isArray(c.cmd.cursors) ? c.cmd.cursors : [];
  const killed: unknown[] = [];
  const notFound: unknown[] = [];
  for (const id of ids) (c.engine.cursors.kill(id) ? killed : notFound).push(id);
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
}

function count(c: CommandContext): Doc {
  const coll = c.engine.getCollection(c.db, collectionName(c));
  if (!coll) return { n: 0, ok: 1 };
  const filter = isPlainObject(c.cmd.query) ? c.cmd.query : undefined;
  const skip = optionalNumber(c.cmd.skip) ?? 0;
  const limit = Math.abs(optionalNumber(c.cmd.limit) ?? 0);
  let n: number;
  if (!filter || Object.keys(filter).length === 0) n = coll.size;
  else n = runQuery(coll, { filter }).length;
  n = Math.max(0, n - skip);
  if (limit > 0) n = Math.min(n, limit);
  return { n, ok: 1 };
}

function distinct(c: CommandContext): Doc {
  const key = c.cmd.key;
  if (typeof key !== 'string') throw badValue("'key' must be a string");
  const coll = c.engine.getCollection(c.db, collectionName(c));
  if (!coll) return { values: [], ok: 1 };
  const filter = isPlainObject(c.cmd.query) ? c.cmd.query : undefined;
  const seen = new Set<string>();
  const values: unknown[] = [];
  for (const d of runQuery(coll, { filter })) {
    for (const v of getPathValues(d, key)) {
      if (v === undefined) continue;
      if (Array.isArray(v) && v.length === 0) continue;
      const k = canonicalKey(v);
      if (!seen.has(k)) {
        seen.add(k);
        values.push(v);
      }
    }
  }
  return { values, ok: 1 };
}

export const readCommands: Record<string, Handler> = { find, getMore, killCursors, count, distinct };
