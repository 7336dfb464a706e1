/** Collection and index management: create, drop, list*, createIndexes, dropIndexes. */
import { Query } from 'mingo';
import { ErrorCodes, MongoCommandError, badValue } from '../errors';
import type { IndexSpec } from '../indexes';
import { deepEqual, isPlainObject, type Doc } from '../values';
import { collectionName, cursorReply, optionalNumber, type CommandContext, type Handler } from './context';

function nsNotFound(ns: string): MongoCommandError {
  return new MongoCommandError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns}`);
}

/** Fields every command may carry that are not collection options. */
const GENERIC_FIELDS = new Set(['$db', 'lsid', '$clusterTime', 'writeConcern', 'readConcern', 'txnNumber', 'autocommit', 'startTransaction', '$readPreference', 'comment', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors']);

function create(c: CommandContext): Doc {
  const name = collectionName(c);
  const options = Object.fromEntries(Object.entries(c.cmd).filter(([k]) => k !== c.name && !GENERIC_FIELDS.has(k)));
  c.engine.createCollection(c.op, c.db, name, options);
  return { ok: 1 };
}

function drop(c: CommandContext): Doc {
  const name = collectionName(c);
  const coll = c.engine.dropCollection(c.op, c.db, name);
  // MongoDB 7 answers ok for a missing collection too.
  return coll ? { ns: coll.ns, nIndexesWas: coll.indexes.size, ok: 1 } : { ok: 1 };
}

function dropDatabase(c: CommandContext): Doc {
  c.engine.dropDatabase(c.op, c.db);
  return { dropped: c.db, ok: 1 };
}

function listCollections(c: CommandContext): Doc {
  const colls = c.engine.dbs.get(c.db);
  let infos: Doc[] = [...(colls?.values() ?? [])].map((coll) => ({
    name: coll.name,
    type: 'collection',
    options: coll.options,
    info: { readOnly: false, uuid: coll.uuid },
    idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
  }));
  if (isPlainObject(c.cmd.filter) && Object.keys(c.cmd.filter).length) {
    const q = new Query(c.cmd.filter);
    infos = infos.filter((i) => q.test(i));
  }
  if (c.cmd.nameOnly === true) infos = infos.map((i) => ({ name: i.name, type: i.type }));
  const batch = isPlainObject(c.cmd.cursor) ? optionalNumber(c.cmd.cursor.batchSize) : undefined;
  return cursorReply(c, `${c.db}.$cmd.listCollections`, infos, batch);
}

function defaultIndexName(key: Doc): string {
  return Object.entries(key)
    .map(([f, d]) => `${f}_${String(d)}`)
    .join('_');
}

const COMPARED_OPTIONS = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'collation'];

function sameOptions(a: IndexSpec, b: IndexSpec): boolean {
  return COMPARED_OPTIONS.every((o) => deepEqual(a[o] ?? (o === 'unique' || o === 'sparse' ? false : undefined), b[o] ?? (o === 'unique' || o === 'sparse' ? false : undefined)));
}

function createIndexes(c: CommandContext): Doc {
  const name = collectionName(c);
  const specs = c.cmd.indexes;
  if (!Array.isArray(specs) || specs.length === 0) throw badValue("'indexes' must be a non-empty array");
  const existed = c.engine.getCollection(c.db, name) !== undefined;
  const coll = c.engine.ensureCollection(c.op, c.db, name);
  const before = coll.indexes.size;
  let created = 0;
  for (const raw of specs) {
    if (!isPlainObject(raw) || !isPlainObject(raw.key) || Object.keys(raw.key).length === 0) {
      throw new MongoCommandError(ErrorCodes.FailedToParse, 'index specification must have a non-empty key object');
    }
    const spec: IndexSpec = { v: 2, ...(raw as Doc), key: raw.key, name: typeof raw.name === 'string' ? raw.name : defaultIndexName(raw.key) };
    delete spec.background;
    const same = coll.indexes.get(spec.name);
    if (same) {
      if (!deepEqual(same.spec.key, spec.key)) {
        throw new MongoCommandError(ErrorCodes.IndexKeySpecsConflict, `An existing index has the same name as the requested index. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(same.spec)}`);
      }
      if (!sameOptions(same.spec, spec)) {
        throw new MongoCommandError(ErrorCodes.IndexOptionsConflict, `An existing index has the same name as the requested index. Requested index: ${JSON.stringify(spec)}, existing index: ${JSON.stringify(same.spec)}`);
      }
      continue;
    }
    for (const other of coll.indexes.values()) {
      if (deepEqual(other.spec.key, spec.key) && sameOptions(other.spec, spec) && !spec.partialFilterExpression) {
        throw new MongoCommandError(ErrorCodes.IndexOptionsConflict, `Index already exists with a different name: ${other.name}`);
      }
    }
    c.engine.createIndex(c.op, coll, spec);
    created++;
  }
  const reply: Doc = { numIndexesBefore: before, numIndexesAfter: coll.indexes.size, createdCollectionAutomatically: !existed };
  if (created === 0) reply.note = 'all indexes already exist';
  reply.ok = 1;
  return reply;
}

function listIndexes(c: CommandContext): Doc {
  const name = collectionName(c);
  const coll = c.engine.getCollection(c.db, name);
  if (!coll) throw nsNotFound(`${c.db}.${name}`);
  const specs = [...coll.indexes.values()].map((i) => i.describe());
  const batch = isPlainObject(c.cmd.cursor) ? optionalNumber(c.cmd.cursor.batchSize) : undefined;
  return cursorReply(c, coll.ns, specs, batch);
}

function dropIndexes(c: CommandContext): Doc {
  const name = collectionName(c);
  const coll = c.engine.getCollection(c.db, name);
  if (!coll) throw nsNotFound(`${c.db}.${name}`);
  const was = coll.indexes.size;
  const target = c.cmd.index;
  let names: string[];
  if (target === '*') names = [...coll.indexes.keys()].filter((n) => n !== '_id_');
  else if (typeof target === 'string') names = [target];
  else if (Array.isArray(target)) names = target.map(String);
  else if (isPlainObject(target)) {
    const found = [...coll.indexes.values()].find((i) => deepEqual(i.spec.key, target));
    if (!found) throw new MongoCommandError(ErrorCodes.IndexNotFound, `can't find index with key: ${JSON.stringify(target)}`);
    names = [found.name];
  } else throw badValue("'index' must be a name, key pattern, list of names or '*'");
  for (const n of names) c.engine.dropIndex(c.op, coll, n);
  return { nIndexesWas: was, ok: 1 };
}

export const ddlCommands: Record<string, Handler> = {
  create,
  drop,
  dropDatabase,
  listCollections,
  createIndexes,
  listIndexes,
  dropIndexes,
};
