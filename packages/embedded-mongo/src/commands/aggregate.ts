/**
 * aggregate: a leading $match (and $sort/$skip/$limit right after it) is planned against our
 * indexes; the remaining stages run in mingo. `$changeStream` pipelines open a change stream.
 */
import { Aggregator, ProcessingMode } from 'mingo';
import { Timestamp } from 'bson';
import { ChangeStreamCursor } from '../changeStreams';
import { badValue } from '../errors';
import { parseSort, runQuery, type QueryOptions } from '../query';
import { canonicalKey, deepClone, isPlainObject, type Doc } from '../values';
import { cursorReply, optionalNumber, type CommandContext, type Handler } from './context';

const UNSUPPORTED_STAGES = new Set(['$out', '$merge', '$geoNear', '$search', '$searchMeta', '$vectorSearch', '$currentOp', '$listSessions', '$collStats', '$indexStats', '$planCacheStats']);

function stageName(s: Doc): string {
  return Object.keys(s)[0] ?? '';
}

async function aggregate(c: CommandContext): Promise<Doc> {
  const pipeline = c.cmd.pipeline;
  if (!Array.isArray(pipeline) || !pipeline.every(isPlainObject)) throw badValue("'pipeline' must be an array of objects");
  const stages = pipeline as Doc[];
  const batchSize = isPlainObject(c.cmd.cursor) ? optionalNumber(c.cmd.cursor.batchSize) : undefined;
  if (stages[0] && stageName(stages[0]) === '$changeStream') return openChangeStream(c, stages, batchSize);
  for (const s of stages) {
    const n = stageName(s);
    if (UNSUPPORTED_STAGES.has(n)) throw badValue(`${n} is not supported by the embedded engine`);
    if (n === '$changeStream') throw badValue('$changeStream is only valid as the first stage in a pipeline');
  }
  const target = c.cmd.aggregate;
  if (typeof target !== 'string') throw badValue('aggregate on a whole database is only supported for $changeStream');
  const ns = `${c.db}.${target}`;
  const coll = c.engine.getCollection(c.db, target);
  if (!coll) return cursorReply(c, ns, [], batchSize);

  const { q, rest } = pushdown(stages);
  const source = runQuery(coll, q);
  let results: Doc[];
  if (rest.length === 0) results = source;
  else if (isCountPipeline(rest)) {
    results = source.length ? [{ _id: (rest[0]!.$group as Doc)._id, n: source.length }] : [];
  }
  else {
    // mingo's $set/$addFields with a dotted path and $unset write into the documents they are given:
    // those are the stored versions (here and through $lookup), which a read must never change.
    const agg = new Aggregator(rest, {
      processingMode: ProcessingMode.CLONE_INPUT,
      collectionResolver: (name: string) => [...(c.engine.getCollection(c.db, name)?.values() ?? [])].map(deepClone),
    });
    results = agg.run(source) as Doc[];
  }
  return cursorReply(c, ns, results, batchSize);
}

/** Splits a pipeline into what the planner answers (a leading $match, $sort, $skip, $limit) and the rest. */
export function pushdown(stages: Doc[]): { q: QueryOptions; rest: Doc[] } {
  const q: QueryOptions = {};
  let i = 0;
  if (stages[0]?.$match !== undefined && isPlainObject(stages[0].$match)) {
    q.filter = stages[0].$match;
    i = 1;
  }
  if (stages[i]?.$sort !== undefined) {
    q.sort = parseSort(stages[i]!.$sort);
    i++;
  }
  if (q.sort) {
    // $sort + $skip + $limit can be answered by an ordered index scan.
    if (typeof stages[i]?.$skip === 'number') q.skip = stages[i++]!.$skip as number;
    if (typeof stages[i]?.$limit === 'number') q.limit = stages[i++]!.$limit as number;
  }
  return { q, rest: stages.slice(i) };
}

/** The driver's countDocuments pipeline tail: { $group: { _id: 1, n: { $sum: 1 } } }. */
function isCountPipeline(rest: Doc[]): boolean {
  if (rest.length !== 1) return false;
  const g = rest[0]!.$group;
  if (!isPlainObject(g) || Object.keys(g).length !== 2) return false;
  const id = g._id;
  const n = g.n;
  return (typeof id === 'number' || id === null) && isPlainObject(n) && n.$sum === 1 && Object.keys(n).length === 1;
}

function openChangeStream(c: CommandContext, stages: Doc[], batchSize: number | undefined): Doc {
  const spec = stages[0]!.$changeStream;
  if (!isPlainObject(spec)) throw badValue('$changeStream spec must be an object');
  const target = c.cmd.aggregate;
  const wholeDb = target === 1 || target === '1';
  if (!wholeDb && typeof target !== 'string') throw badValue('invalid aggregate target');
  const allChangesForCluster = spec.allChangesForCluster === true;
  if (allChangesForCluster && c.db !== 'admin') throw badValue('allChangesForCluster requires the admin database');
  const log = c.engine.changes;
  let start = log.headSeq;
  const token = spec.resumeAfter ?? spec.startAfter;
  if (token !== undefined) start = log.parseToken(token);
  else if (spec.startAtOperationTime instanceof Timestamp) start = log.positionAt(spec.startAtOperationTime);
  for (const s of stages.slice(1)) {
    const n = stageName(s);
    if (!['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$redact'].includes(n)) {
      throw badValue(`${n} is not permitted in a $changeStream pipeline`);
    }
  }
  const stream = new ChangeStreamCursor(
    log,
    {
      db: c.db,
      coll: wholeDb ? undefined : (target as string),
      allChangesForCluster,
      fullDocument: typeof spec.fullDocument === 'string' ? spec.fullDocument : 'default',
      fullDocumentBeforeChange: typeof spec.fullDocumentBeforeChange === 'string' ? spec.fullDocumentBeforeChange : 'off',
      showExpandedEvents: spec.showExpandedEvents === true,
    },
    stages.slice(1),
    start,
    (db, coll, id) => c.engine.getCollection(db, coll)?.get(canonicalKey(id)),
  );
  const ns = wholeDb ? `${c.db}.$cmd.aggregate` : `${c.db}.${String(target)}`;
  const firstBatch = batchSize === 0 ? [] : stream.next(batchSize ?? 101);
  const id = c.engine.cursors.register({ kind: 'change', ns, stream, lastUsed: Date.now(), busy: false });
  return { cursor: { firstBatch, postBatchResumeToken: stream.resumeToken, id, ns }, ok: 1 };
}

export const aggregateCommands: Record<string, Handler> = { aggregate };
