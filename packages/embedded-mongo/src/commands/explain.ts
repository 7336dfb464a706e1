/**
 * explain: runs the planner and executor on the inner command's query (never its writes) and answers
 * in MongoDB's shapes: `queryPlanner` (winningPlan as nested stages, rejectedPlans) and, for verbosity
 * `executionStats` / `allPlansExecution`, `executionStats` with the keys and documents really examined.
 * Aggregate: the whole pipeline pushed down answers at the top level; otherwise, as MongoDB 7 does,
 * under `stages[0].$cursor`, followed by the remaining stages.
 */
import { badValue } from '../errors';
import { execute, parseSort, type Execution, type QueryOptions } from '../query';
import { isPlainObject, type Doc } from '../values';
import { pushdown } from './aggregate';
import { optionalNumber, type CommandContext, type Handler } from './context';

interface Explained {
  q: QueryOptions;
  /** The stage above the query's own (COUNT, UPDATE, DELETE), if any. */
  top?: string;
  /** Aggregate stages that run after the pushed-down part. */
  rest?: Doc[];
}

function asFilter(v: unknown): Doc | undefined {
  return isPlainObject(v) ? v : undefined;
}

/** The query part of each explainable command. */
function queryOf(name: string, inner: Doc): Explained {
  switch (name) {
    case 'find':
      return { q: { filter: asFilter(inner.filter), sort: parseSort(inner.sort), skip: optionalNumber(inner.skip), limit: Math.abs(optionalNumber(inner.limit) ?? 0) } };
    case 'count':
      return { q: { filter: asFilter(inner.query), skip: optionalNumber(inner.skip), limit: Math.abs(optionalNumber(inner.limit) ?? 0) }, top: 'COUNT' };
    case 'distinct':
      return { q: { filter: asFilter(inner.query) }, top: 'DISTINCT' };
    case 'findAndModify':
    case 'findandmodify':
      return { q: { filter: asFilter(inner.query), sort: parseSort(inner.sort), limit: 1 }, top: inner.remove === true ? 'DELETE' : 'UPDATE' };
    case 'update': {
      const st = Array.isArray(inner.updates) && isPlainObject(inner.updates[0]) ? inner.updates[0] : {};
      return { q: { filter: asFilter(st.q), limit: st.multi === true ? 0 : 1 }, top: 'UPDATE' };
    }
    case 'delete': {
      const st = Array.isArray(inner.deletes) && isPlainObject(inner.deletes[0]) ? inner.deletes[0] : {};
      return { q: { filter: asFilter(st.q), limit: st.limit === 1 ? 1 : 0 }, top: 'DELETE' };
    }
    case 'aggregate': {
      if (!Array.isArray(inner.pipeline) || !inner.pipeline.every(isPlainObject)) throw badValue("'pipeline' must be an array of objects");
      const { q, rest } = pushdown(inner.pipeline as Doc[]);
      return { q, rest };
    }
    default:
      throw badValue(`explain does not support the ${name} command`);
  }
}

/** The winning plan as nested stages: access stage, then SORT / SKIP / LIMIT, then the command's own. */
function planTree(x: Execution | undefined, e: Explained, withStats: boolean): Doc {
  let node: Doc = x ? { ...x.winner.stage } : { stage: 'EOF' };
  if (withStats && x) decorate(node, x);
  const wrap = (stage: Doc) => {
    node = { ...stage, inputStage: node };
    if (withStats && x) node.nReturned = x.docs.length;
  };
  const { sort, skip, limit } = e.q;
  if (x && sort && !x.winner.ordered) {
    wrap({ stage: 'SORT', sortPattern: Object.fromEntries(sort), memLimit: 104_857_600, ...(limit ? { limitAmount: (skip ?? 0) + limit } : {}), type: 'simple' });
  } else if (limit && e.top === undefined) wrap({ stage: 'LIMIT', limitAmount: limit });
  if (skip) wrap({ stage: 'SKIP', skipAmount: skip });
  if (e.top) wrap({ stage: e.top });
  return node;
}

/** executionStats figures on the access stages (FETCH counts documents, IXSCAN keys). */
function decorate(node: Doc, x: Execution): void {
  const input = node.inputStage as Doc | undefined;
  node.nReturned = x.docs.length;
  if (node.stage === 'FETCH') node.docsExamined = x.stats.docs;
  if (node.stage === 'COLLSCAN') node.docsExamined = x.stats.docs;
  if (node.stage === 'IDHACK') {
    node.keysExamined = x.stats.keys;
    node.docsExamined = x.stats.docs;
  }
  if (input) {
    input.keysExamined = x.stats.keys;
    input.nReturned = x.stats.keys;
  }
}

function explain(c: CommandContext): Doc {
  const inner = c.cmd.explain;
  if (!isPlainObject(inner)) throw badValue('explain needs a command');
  const name = Object.keys(inner)[0] ?? '';
  const collName = inner[name];
  if (typeof collName !== 'string') throw badValue('explain needs a collection name');
  const verbosity = typeof c.cmd.verbosity === 'string' ? c.cmd.verbosity : 'allPlansExecution';
  const withStats = verbosity !== 'queryPlanner';
  const e = queryOf(name, inner);
  const coll = c.engine.getCollection(c.db, collName);
  const started = Date.now();
  const x = coll ? execute(coll, e.q) : undefined;
  const queryPlanner: Doc = {
    namespace: `${c.db}.${collName}`,
    indexFilterSet: false,
    parsedQuery: e.q.filter ?? {},
    winningPlan: planTree(x, e, false),
    rejectedPlans: (x?.rejected ?? []).map((r) => ({ ...r.stage })),
  };
  const executionStats: Doc | undefined = withStats
    ? {
        executionSuccess: true,
        nReturned: x?.docs.length ?? 0,
        executionTimeMillis: Date.now() - started,
        totalKeysExamined: x?.stats.keys ?? 0,
        totalDocsExamined: x?.stats.docs ?? 0,
        executionStages: planTree(x, e, true),
      }
    : undefined;
  const planned: Doc = { queryPlanner, ...(executionStats ? { executionStats } : {}) };
  const body: Doc = e.rest && e.rest.length > 0 ? { stages: [{ $cursor: planned }, ...e.rest] } : planned;
  return { explainVersion: '1', ...body, command: inner, serverInfo: { host: 'embedded', version: '7.0.0' }, ok: 1 };
}

export const explainCommands: Record<string, Handler> = { explain };
