import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): where the samples land (self time) by function and by
 * area (our files, each npm package, Node internals, GC), and the inclusive time of our own functions.
 *   npx tsx bench/profile/summarize.ts bench/.tmp/profiles/gateway-rest/<file>.cpuprofile [top] [--stalls=200]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function shortUrl(url: string): string {
  if (!url) return '';
  const p = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) return p.slice(nm + 'node_modules/'.length);
  return p.startsWith(ROOT) ? path.relative(ROOT, p) : p;
}

/** Where a frame belongs: a file of ours, an npm package, Node itself, or V8's pseudo-frames. */
function area(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const p = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + 'node_modules/'.length).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return shortUrl(url);
}

function frameKey(frame: ProfileNode['callFrame']): string {
  const name = frame.functionName || '(anonymous)';
  const where = shortUrl(frame.url);
  return where ? `${name}  ${where}:${frame.lineNumber + 1}` : name;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  selfByFunction: Array<[string, number]>;
  selfByArea: Array<[string, number]>;
  inclusiveOurs: Array<[string, number]>;
}

export function summarizeProfile(file: string): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let idle = 0;
  prof.samples.forEach((id, i) => {
    const us = prof.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += us;
      return;
    }
    total += us;
    self.set(frameKey(node.callFrame), (self.get(frameKey(node.callFrame)) ?? 0) + us);
    const a = area(node.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (!f.url.includes('/src/') || f.url.includes('node_modules')) continue;
      const key = frameKey(f);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  });
  const ms = (m: Map<string, number>) => [...m.entries()].map(([k, v]) => [k, v / 1000] as [string, number]).sort((a, b) => b[1] - a[1]);
  return { totalMs: total / 1000, idleMs: idle / 1000, selfByFunction: ms(self), selfByArea: ms(areas), inclusiveOurs: ms(inclusive) };
}

/**
 * Busy stretches: intervals longer than `minMs` in which the thread never went idle (the event loop was
 * blocked or saturated), each with the functions (self time) and the deepest frames of ours (`src/`)
 * that filled it. A request that waits behind such a stretch waits for all of it.
 */
export function findStalls(file: string, minMs = 200, top = 8): string {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile & { startTime: number };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ours = (id: number): string => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.url.includes('/src/') && !f.url.includes('node_modules')) return frameKey(f);
    }
    return '(no frame of ours)';
  };
  const out: string[] = [];
  let t = 0;
  let start = -1;
  let startIndex = 0;
  const flush = (end: number, endIndex: number) => {
    if (start < 0 || (end - start) / 1000 < minMs) return;
    const self = new Map<string, number>();
    const mine = new Map<string, number>();
    for (let i = startIndex; i < endIndex; i++) {
      const us = prof.timeDeltas[i] ?? 0;
      const node = byId.get(prof.samples[i]!)!;
      self.set(frameKey(node.callFrame), (self.get(frameKey(node.callFrame)) ?? 0) + us);
      const o = ours(node.id);
      mine.set(o, (mine.get(o) ?? 0) + us);
    }
    const fmt = (m: Map<string, number>) =>
      [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `    ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`);
    out.push(`-- busy ${((end - start) / 1000).toFixed(0)} ms from +${(start / 1e6).toFixed(2)} s`, '  self:', ...fmt(self), '  innermost frame of ours:', ...fmt(mine));
  };
  prof.samples.forEach((id, i) => {
    t += prof.timeDeltas[i] ?? 0;
    const idle = byId.get(id)!.callFrame.functionName === '(idle)';
    if (idle) {
      flush(t, i);
      start = -1;
    } else if (start < 0) {
      start = t;
      startIndex = i;
    }
  });
  flush(t, prof.samples.length);
  return out.join('\n') || `no busy stretch over ${minMs} ms`;
}

export function formatSummary(name: string, s: ProfileSummary, top = 25): string {
  const pct = (v: number) => `${((100 * v) / s.totalMs).toFixed(1).padStart(5)} %`;
  const lines = [
    `== ${name}: ${(s.totalMs / 1000).toFixed(1)} s on CPU (plus ${(s.idleMs / 1000).toFixed(1)} s idle)`,
    '-- self time by area',
    ...s.selfByArea.slice(0, 15).map(([k, v]) => `${pct(v)}  ${v.toFixed(0).padStart(8)} ms  ${k}`),
    `-- top ${top} functions by self time`,
    ...s.selfByFunction.slice(0, top).map(([k, v]) => `${pct(v)}  ${v.toFixed(0).padStart(8)} ms  ${k}`),
    `-- top ${top} of our functions (src/) by inclusive time`,
    ...s.inclusiveOurs.slice(0, top).map(([k, v]) => `${pct(v)}  ${v.toFixed(0).padStart(8)} ms  ${k}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [file, top, stalls] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/profile/summarize.ts <file.cpuprofile> [top] [--stalls=<ms>]');
    process.exit(2);
  }
  console.log(formatSummary(path.basename(file), summarizeProfile(file), Number(top ?? 25)));
  if (stalls?.startsWith('--stalls')) console.log(findStalls(file, Number(stalls.split('=')[1] ?? 200)));
}
