/**
 * Query-shape recorder (diagnostics, off unless PGW_QUERY_SHAPES names a directory): each distinct shape the
 * gateway sends, once, with an example, for `npm run test:plans` to explain and fail any shape whose plan
 * scans. Uses the driver's command monitoring, so it works on a real MongoDB too. More:
 * docs/decisions/notes/storage.md, "Query-shape recorder".
 */
import fs from 'node:fs';
import path from 'node:path';
import { BSON, EJSON } from 'bson';
import type { mongo } from 'mongoose';

/** A recorded shape: `key` identifies it; `example` is a command that explain can run. */
export interface QueryShape {
  key: string;
  collection: string;
  command: string;
  shape: unknown;
  example: Record<string, unknown>;
}

/**
 * Examples keep their filters (explain needs them) but not what a write would set: explain never
 * writes, and the values written (webhook secrets among them) have no business in a diagnostics file.
 */
const EXPLAIN_UPDATE = { $set: { _explained: true } };

const QUERY_COMMANDS: ReadonlySet<string> = new Set(['find', 'aggregate', 'count', 'distinct', 'findAndModify', 'update', 'delete']);

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Date) return 'date';
  // A RegExp has no own entries: walked as an object it would record `{"$regex": {}}`, which EJSON
  // cannot read back (the plan test then fails on every shape, not on this one).
  if (v instanceof RegExp) return 'regex';
  const bson = v && typeof v === 'object' ? (v as { _bsontype?: string })._bsontype : undefined;
  return bson ?? typeof v;
}

/** The filter's structure: field names and operators kept, values replaced by their type. */
export function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [...new Set(v.map((x) => JSON.stringify(shapeOf(x))))].map((s) => JSON.parse(s) as unknown);
  if (v && typeof v === 'object' && typeOf(v) === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, shapeOf(x)]));
  }
  return typeOf(v);
}

/** One (collection, statement) per query the command carries: batched updates and deletes carry several. */
function statements(name: string, cmd: Record<string, unknown>): Array<{ example: Record<string, unknown>; shape: unknown }> {
  const coll = cmd[name];
  const pick = (keys: string[]) => Object.fromEntries(keys.filter((k) => cmd[k] !== undefined).map((k) => [k, cmd[k]]));
  switch (name) {
    case 'find':
      return [{ example: { find: coll, ...pick(['filter', 'sort', 'projection', 'skip', 'limit', 'singleBatch']) }, shape: { filter: shapeOf(cmd.filter ?? {}), sort: cmd.sort, limit: cmd.limit !== undefined, projection: cmd.projection ? Object.keys(cmd.projection as object) : undefined } }];
    case 'count':
    case 'distinct':
      return [{ example: { [name]: coll, ...pick(['query', 'key', 'skip', 'limit']) }, shape: { query: shapeOf(cmd.query ?? {}), key: cmd.key } }];
    case 'findAndModify':
      return [{ example: { findAndModify: coll, ...pick(['query', 'sort', 'remove', 'new', 'upsert', 'fields']), ...(cmd.remove === true ? {} : { update: EXPLAIN_UPDATE }) }, shape: { query: shapeOf(cmd.query ?? {}), sort: cmd.sort, remove: cmd.remove === true } }];
    case 'aggregate': {
      const pipeline = (cmd.pipeline as Array<Record<string, unknown>>) ?? [];
      if (pipeline[0] && '$changeStream' in pipeline[0]) return []; // a change stream, not a query
      return [{ example: { aggregate: coll, pipeline, cursor: {} }, shape: { pipeline: shapeOf(pipeline) } }];
    }
    case 'update':
      return ((cmd.updates as Array<Record<string, unknown>>) ?? []).map((u) => ({
        example: { update: coll, updates: [{ ...u, u: EXPLAIN_UPDATE }] },
        shape: { q: shapeOf(u.q ?? {}), u: Array.isArray(u.u) ? 'pipeline' : Object.keys((u.u as object) ?? {}), multi: u.multi === true, upsert: u.upsert === true },
      }));
    case 'delete':
      return ((cmd.deletes as Array<Record<string, unknown>>) ?? []).map((d) => ({ example: { delete: coll, deletes: [d] }, shape: { q: shapeOf(d.q ?? {}), limit: d.limit } }));
    default:
      return [];
  }
}

/** Starts recording the shapes `client` sends (the client must have been created with monitorCommands). */
export function recordQueryShapes(client: mongo.MongoClient, dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `shapes-${process.pid}.jsonl`);
  const seen = new Set<string>();
  client.on('commandStarted', (ev) => {
    if (!QUERY_COMMANDS.has(ev.commandName)) return;
    // A listener that throws would fail the command it watches: diagnostics must never do that.
    try {
      record(ev.commandName, ev.command as Record<string, unknown>);
    } catch (err) {
      process.emitWarning(`query shape not recorded: ${String(err)}`);
    }
  });
  function record(commandName: string, sent: Record<string, unknown>): void {
    // The command as the server receives it: mongoose values (arrays with parent links) become plain BSON.
    const cmd = BSON.deserialize(BSON.serialize(sent));
    const collection = String(cmd[commandName]);
    for (const st of statements(commandName, cmd)) {
      const key = JSON.stringify([collection, commandName, st.shape]);
      if (seen.has(key)) continue;
      seen.add(key);
      const rec: QueryShape = { key, collection, command: commandName, shape: st.shape, example: st.example };
      // EJSON keeps dates and other BSON values exact for the explain that re-runs the example.
      fs.appendFileSync(file, `${EJSON.stringify(rec, { relaxed: true })}\n`);
    }
  }
}
