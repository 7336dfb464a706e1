/** findAndModify: find one (by filter + sort), then update/replace/remove/upsert it atomically. */
import type { Collection } from '../collection';
import { badValue } from '../errors';
import { applyProjection, compileProjection } from '../projection';
import { parseSort, runQuery } from '../query';
import { applyUpdate, buildUpsertDoc, isReplacement } from '../update';
import { deepEqual, isPlainObject, type Doc } from '../values';
import { collectionName, type CommandContext, type Handler } from './context';

async function findAndModify(c: CommandContext): Promise<Doc> {
  const name = collectionName(c);
  const cmd = c.cmd;
  const filter = isPlainObject(cmd.query) ? cmd.query : {};
  const sort = parseSort(cmd.sort);
  const remove = cmd.remove === true;
  const update = cmd.update;
  const returnNew = cmd.new === true;
  const upsert = cmd.upsert === true;
  if (remove && (update !== undefined || upsert)) throw badValue('Cannot specify both an update and remove=true');
  if (!remove && !isPlainObject(update) && !Array.isArray(update)) throw badValue('Either an update or remove=true must be specified');
  if (cmd.arrayFilters !== undefined) throw badValue('arrayFilters are not supported by the embedded engine');
  let coll: Collection | undefined = c.engine.getCollection(c.db, name);

  const { value, lastErrorObject } = await c.engine.retryLocked((): { value: Doc | null; lastErrorObject: Doc } => {
    const found = coll ? runQuery(coll, { filter, sort, limit: 1 })[0] : undefined;
    if (found) c.engine.checkUnlocked(c.op, coll!, [found]);
    if (remove) {
      if (!found) return { value: null, lastErrorObject: { n: 0 } };
      c.engine.deleteDoc(c.op, coll!, found);
      return { value: found, lastErrorObject: { n: 1 } };
    }
    if (found) {
      const after = applyUpdate(found, update, { filter, isInsert: false });
      if (!deepEqual(found, after)) {
        c.engine.replaceDoc(c.op, coll!, found, after, isReplacement(update) ? 'replace' : 'update');
      }
      return { value: returnNew ? after : found, lastErrorObject: { n: 1, updatedExisting: true } };
    }
    if (!upsert) return { value: null, lastErrorObject: { n: 0, updatedExisting: false } };
    coll ??= c.engine.ensureCollection(c.op, c.db, name);
    const doc = buildUpsertDoc(filter, update);
    c.engine.insertDoc(c.op, coll, doc);
    return { value: returnNew ? doc : null, lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id } };
  });
  const proj = compileProjection(cmd.fields);
  return { lastErrorObject, value: value && proj ? applyProjection(value, proj) : value, ok: 1 };
}

export const findAndModifyCommands: Record<string, Handler> = { findAndModify, findandmodify: findAndModify };
