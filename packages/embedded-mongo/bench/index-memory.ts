/**
 * What the indexes cost in memory and at start-up (issue 13): opens the engine on a data directory
 * in this process, then reports heap used after a full GC with every index built, and again after the
 * indexes are emptied; the difference is what the indexes hold. The _id indexes, which the engine builds
 * on first need, are counted apart.
 *
 *   node --expose-gc --import tsx packages/embedded-mongo/bench/index-memory.ts <data dir copy>
 *
 * The data directory is opened for writing (the journal): pass a copy, never the original.
 */
import v8 from 'node:v8';
import { Engine } from '../src/engine';

const dir = process.argv[2];
if (!dir || typeof globalThis.gc !== 'function') {
  console.error('usage: node --expose-gc --import tsx bench/index-memory.ts <data dir copy>');
  process.exit(2);
}
const gc = globalThis.gc as () => void;

function heapUsed(): number {
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

const mib = (n: number): string => (n / 1048576).toFixed(1);
const before = heapUsed();
const t0 = performance.now();
const engine = new Engine({ dataDir: dir });
engine.open();
const openMs = performance.now() - t0;
const colls = [...engine.dbs.values()].flatMap((c) => [...c.values()]);
const docs = colls.reduce((sum, c) => sum + c.size, 0);
const count = (ids: boolean): number =>
  colls.reduce((sum, c) => sum + [...c.indexes.values()].filter((i) => i.isId === ids).reduce((s, i) => s + i.size, 0), 0);
// As the gateway runs: the _id indexes are built on first need (a sort or a range on _id), so not yet.
const secondary = count(false);
const loaded = heapUsed();
const ids = count(true);
const withIds = heapUsed();
for (const c of colls) for (const idx of c.indexes.values()) idx.clear();
const empty = heapUsed();
const perEntry = (bytes: number, n: number): string => `${mib(bytes)} MiB, ${(bytes / n).toFixed(0)} bytes per entry`;
console.log(`open ${openMs.toFixed(0)} ms; ${docs} documents; heap used ${mib(before)} MiB before open, ${mib(loaded)} MiB loaded`);
console.log(`secondary indexes: ${secondary} entries, ${perEntry(loaded - empty, secondary)}`);
console.log(`_id indexes once built: ${ids} entries, ${perEntry(withIds - loaded, ids)}`);
console.log(`heap with every index emptied: ${mib(empty)} MiB; rss ${mib(process.memoryUsage().rss)} MiB`);
await engine.close();
