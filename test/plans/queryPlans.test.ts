/**
 * Every query shape the gateway sends is planned well: recorded while a seeded gateway serves every
 * route (and, when PGW_QUERY_SHAPES_MERGE names the directory the integration suites recorded into,
 * every shape they made it send), then explained with `executionStats` on the seeded store. A shape
 * fails if its plan scans a collection, or examines more than EXAMINED_PER_RESULT times the documents
 * (or keys) it returns, plus SLACK. Runs unchanged on a real MongoDB: MONGODB_URI=... npm run test:plans.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EJSON } from 'bson';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryShape } from '../../src/db/queryShapes';
import { startTestServer, type TestServer } from '../support/server';
import { backgroundWorkDone, seed, workload, type Seeded } from './workload';

/**
 * A good plan examines about what it returns: an index's equality prefix, then the filter's other
 * conditions on a few documents (a payment's events, an account's page). 4 per result leaves room for
 * documents the index admits and the filter rejects; SLACK for look-ups that return nothing and for
 * the one extra key a limit probe reads.
 */
const EXAMINED_PER_RESULT = 4;
const SLACK = 10;
const PAYMENTS = Number(process.env.PLANS_PAYMENTS ?? 3000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-shapes-'));
let server: TestServer;
let seeded: Seeded;

beforeAll(async () => {
  process.env.PGW_QUERY_SHAPES = dir;
  server = await startTestServer({ RATE_LIMIT_PER_MINUTE: '100000000' });
  seeded = await seed(server.baseUrl, PAYMENTS);
  await workload(server.baseUrl, seeded);
  // The rail, the webhooks and the timers' queries are shapes too: wait until they have run.
  await backgroundWorkDone(seeded);
}, 300_000);

afterAll(async () => {
  delete process.env.PGW_QUERY_SHAPES;
  await seeded?.receiver.close();
  await server?.stop();
});

function readShapes(from: string): QueryShape[] {
  if (!fs.existsSync(from)) return [];
  return fs
    .readdirSync(from)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => fs.readFileSync(path.join(from, f), 'utf8').split('\n').filter(Boolean))
    .map((line) => EJSON.parse(line, { relaxed: false }) as QueryShape);
}

interface Verdict {
  shape: QueryShape;
  stages: string[];
  indexes: string[];
  returned: number;
  docs: number;
  keys: number;
  problem?: string;
}

/** Walks a plan tree (inputStage / inputStages), collecting stage names, index names and the largest nReturned. */
function walk(node: any, out: { stages: string[]; indexes: string[]; returned: number }): void {
  if (!node || typeof node !== 'object') return;
  if (node.stage) out.stages.push(node.stage);
  if (node.indexName) out.indexes.push(node.indexName);
  if (typeof node.nReturned === 'number') out.returned = Math.max(out.returned, node.nReturned);
  walk(node.inputStage, out);
  for (const s of node.inputStages ?? []) walk(s, out);
}

/** How many values the example's `$in` lists ask for. */
function pointLookups(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + pointLookups(x), 0);
  if (!v || typeof v !== 'object') return 0;
  return Object.entries(v as Record<string, unknown>).reduce((n, [k, x]) => n + (k === '$in' && Array.isArray(x) ? x.length : pointLookups(x)), 0);
}

async function judge(shape: QueryShape): Promise<Verdict> {
  const db = mongoose.connection.db!;
  const x: any = await db.command({ explain: shape.example, verbosity: 'executionStats' });
  const planned = x.queryPlanner ? x : (x.stages?.[0]?.$cursor ?? x);
  const stats = planned.executionStats ?? {};
  const tree = { stages: [] as string[], indexes: [] as string[], returned: 0 };
  walk(stats.executionStages ?? planned.queryPlanner?.winningPlan, tree);
  // Reads are judged by what they return; a write or a count by what its query stage found (a real
  // MongoDB reports 0 returned above an UPDATE or COUNT stage).
  if (shape.command === 'find' || shape.command === 'aggregate') tree.returned = stats.nReturned ?? 0;
  const docs = stats.totalDocsExamined ?? 0;
  const keys = stats.totalKeysExamined ?? 0;
  const budget = EXAMINED_PER_RESULT * Math.max(tree.returned, 1) + SLACK;
  // A look-up of n values ({_id: {$in: [...]}}) reads n keys even when none of them exists any more.
  const keyBudget = budget + pointLookups(shape.example);
  let problem: string | undefined;
  if (tree.stages.includes('COLLSCAN')) problem = 'collection scan';
  else if (docs > budget) problem = `examined ${docs} documents for ${tree.returned}`;
  else if (keys > keyBudget) problem = `examined ${keys} keys for ${tree.returned}`;
  return { shape, stages: tree.stages, indexes: tree.indexes, returned: tree.returned, docs, keys, problem };
}

describe('query plans', () => {
  it('every recorded query shape uses an index and examines about what it returns', async () => {
    const shapes = new Map<string, QueryShape>();
    const merged = process.env.PGW_QUERY_SHAPES_MERGE ? readShapes(process.env.PGW_QUERY_SHAPES_MERGE) : [];
    for (const s of [...readShapes(dir), ...merged]) if (!shapes.has(s.key)) shapes.set(s.key, s);
    expect(shapes.size).toBeGreaterThan(20);
    const verdicts: Verdict[] = [];
    for (const s of shapes.values()) verdicts.push(await judge(s));
    verdicts.sort((a, b) => a.shape.collection.localeCompare(b.shape.collection) || a.shape.command.localeCompare(b.shape.command));
    console.log(
      `query shapes: ${verdicts.length} (${merged.length} lines merged from the integration suites)\n` +
        verdicts
          .map((v) => `${v.problem ? 'FAIL' : 'ok  '} ${v.shape.collection}.${v.shape.command} ${JSON.stringify(v.shape.shape)}\n       plan ${v.stages.join(' < ')} [${v.indexes.join(', ')}] returned ${v.returned}, docs ${v.docs}, keys ${v.keys}${v.problem ? `: ${v.problem}` : ''}`)
          .join('\n'),
    );
    expect(verdicts.filter((v) => v.problem).map((v) => `${v.shape.collection}.${v.shape.command} ${JSON.stringify(v.shape.shape)}: ${v.problem}`)).toEqual([]);
  }, 300_000);
});
