import fs from 'node:fs';
import { threadCpuMs } from '../lib/processes';

/**
 * Where the machine's two cores go during a bench:rail run, slice by slice of the run: the gateway's
 * HTTP thread (its main thread), its engine thread (the busiest other thread over the whole run: the
 * embedded engine's worker in the default layout; with BENCH_RAIL_LAYOUT=separate or
 * BACKGROUND_THREAD=true it is whichever other thread worked most), its other threads together (V8's
 * platform threads, which compile hot functions with TurboFan and help the garbage collector, and
 * libuv's pool, which writes the journal), and how much of the machine stayed idle. Sampled from this
 * process every SAMPLE_MS out of /proc, so the gateway runs unchanged.
 *
 * Why: a thread's CPU time alone does not say whether it waited for a core. Round 12 (bench/HISTORY.md)
 * found the HTTP thread busy (event loop utilization) about 90 % of the run but on a core only 55-70 %
 * of it and waiting for one 25-35 % (schedstat's run delay), while V8's platform threads took half a core
 * more in the first 10 s than later: the misses of the target are made in those seconds.
 */
const SAMPLE_MS = 500;

interface Sample {
  at: number;
  threads: Map<number, number>;
  /** ms each thread spent runnable but waiting for a core (schedstat's run delay); empty where the kernel does not keep it. */
  waits: Map<number, number>;
  idleTicks: number;
  totalTicks: number;
}

export interface CpuBySlice {
  /** Per slice, % of one core: the HTTP thread, the engine thread, the gateway's other threads. */
  http: number[];
  engine: number[];
  others: number[];
  /** Per slice, % of the wall time the HTTP and engine threads were ready to run but waited for a core. */
  httpWaiting: number[];
  engineWaiting: number[];
  /** Per slice, % of the whole machine (every core) left idle. */
  machineIdle: number[];
}

function machineTicks(): { idle: number; total: number } {
  // First line of /proc/stat: user nice system idle iowait irq softirq steal ..., in clock ticks.
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((a, b) => a + b, 0) };
}

/** /proc/<pid>/task/<tid>/schedstat: "<ns on a core> <ns waiting on a run queue> <timeslices>". */
function runDelayMs(pid: number, tids: Iterable<number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of tids) {
    try {
      out.set(tid, Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6);
    } catch {
      // no schedstat on this kernel, or the thread ended
    }
  }
  return out;
}

function sample(pid: number): Sample | null {
  try {
    const threads = new Map([...threadCpuMs(pid)].map(([tid, t]) => [tid, t.ms]));
    const { idle, total } = machineTicks();
    return { at: Date.now(), threads, waits: runDelayMs(pid, threads.keys()), idleTicks: idle, totalTicks: total };
  } catch {
    return null; // the gateway exited
  }
}

/** Starts sampling the gateway `pid`; `stop()` returns the figures by slice of `sliceMs` from `t0`. */
export function sampleCpu(pid: number, t0: number, sliceMs: number): { stop(): CpuBySlice } {
  const samples: Sample[] = [];
  const first = sample(pid);
  if (first) samples.push(first);
  const timer = setInterval(() => {
    const s = sample(pid);
    if (s) samples.push(s);
  }, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      const last = samples.at(-1);
      const firstSample = samples[0];
      if (!last || !firstSample) return { http: [], engine: [], others: [], httpWaiting: [], engineWaiting: [], machineIdle: [] };
      // The engine's thread: the busiest over the run but the main thread.
      let engineTid = -1;
      let engineMs = -1;
      for (const [tid, ms] of last.threads) {
        const used = ms - (firstSample.threads.get(tid) ?? 0);
        if (tid !== pid && used > engineMs) [engineTid, engineMs] = [tid, used];
      }
      const acc: Array<{ wallMs: number; http: number; engine: number; others: number; httpWait: number; engineWait: number; idle: number; total: number }> = [];
      for (let i = 1; i < samples.length; i++) {
        const a = samples[i - 1]!;
        const b = samples[i]!;
        if (b.at < t0) continue;
        const slot = (acc[Math.floor((b.at - t0) / sliceMs)] ??= { wallMs: 0, http: 0, engine: 0, others: 0, httpWait: 0, engineWait: 0, idle: 0, total: 0 });
        slot.wallMs += b.at - a.at;
        for (const [tid, ms] of b.threads) {
          const used = ms - (a.threads.get(tid) ?? 0);
          if (tid === pid) slot.http += used;
          else if (tid === engineTid) slot.engine += used;
          else slot.others += used;
        }
        slot.httpWait += (b.waits.get(pid) ?? NaN) - (a.waits.get(pid) ?? NaN);
        slot.engineWait += (b.waits.get(engineTid) ?? NaN) - (a.waits.get(engineTid) ?? NaN);
        slot.idle += b.idleTicks - a.idleTicks;
        slot.total += b.totalTicks - a.totalTicks;
      }
      const pct = (f: (s: (typeof acc)[number]) => number) => Array.from(acc, (s) => (s && s.wallMs > 0 ? (100 * f(s)) / s.wallMs : NaN));
      return {
        http: pct((s) => s.http),
        engine: pct((s) => s.engine),
        others: pct((s) => s.others),
        httpWaiting: pct((s) => s.httpWait),
        engineWaiting: pct((s) => s.engineWait),
        machineIdle: Array.from(acc, (s) => (s && s.total > 0 ? (100 * s.idle) / s.total : NaN)),
      };
    },
  };
}
