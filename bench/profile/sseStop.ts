/**
 * How soon a graceful stop (SIGTERM) ends the gateway's open SSE streams, and how they end. Issue 55:
 * test/streams/sse.test.ts asserted "ended within 3 s of SIGTERM" as a pass/fail bound; the test now
 * checks what the gateway sends (the restart comment, then the end), and the time is measured here.
 *
 *   npx tsx bench/profile/sseStop.ts            (env: SSE_STOP_STREAMS, default 200; SSE_STOP_RUNS, default 3)
 *
 * Each run: the embedded engine and a gateway in processes of their own (bench/lib/services.ts), the
 * gateway with the default SHUTDOWN_GRACE_MS of 10 s (not the bench's 3 s), so that a stream left to the
 * grace period's cut would show as ~10 s; SSE_STOP_STREAMS streams open on 10 reference payments (they
 * stay PENDING: nothing but the stop ends them), each once its snapshot has arrived; then SIGTERM.
 * Printed per run, from the signal: when the streams ended (p50, p99, max), how many got the restart
 * comment, how many ended cleanly (end of body) rather than with an error (reset), and when the process
 * exited (the rest of the stop: timers, webhooks, database).
 */
import { createAccount, createReferenceIntent } from '../lib/api';
import { startDatabase, startGatewayProcess } from '../lib/services';
import { percentile } from '../lib/stats';

const STREAMS = Number(process.env.SSE_STOP_STREAMS ?? 200);
const RUNS = Number(process.env.SSE_STOP_RUNS ?? 3);
const PAYMENTS = 10;
const RESTART_COMMENT = ': server restarting; reconnect with Last-Event-ID';

interface Stream {
  /** Resolves once the snapshot (the first message) has arrived. */
  ready: Promise<void>;
  /** Resolves when the body ends or fails: ms since `since()`'s origin, clean or not, comment seen. */
  ended: Promise<{ at: number; clean: boolean; comment: boolean }>;
}

function openStream(url: string, sk: string, since: () => number): Stream {
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  const ended = (async () => {
    const res = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${sk}` } });
    if (res.status !== 200) throw new Error(`stream ${url}: ${res.status} ${await res.text()}`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let clean = true;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (text.includes('\n\n')) markReady();
      }
    } catch {
      clean = false;
    }
    return { at: since(), clean, comment: text.includes(RESTART_COMMENT) };
  })();
  ended.catch(() => markReady());
  return { ready, ended };
}

async function run(n: number): Promise<void> {
  const db = await startDatabase({ dataDir: '', profile: false });
  const gw = await startGatewayProcess({ mongodbUri: db.url, profile: false, name: `sse-stop-${n}`, env: { SHUTDOWN_GRACE_MS: '10000', SSE_MAX_STREAMS_PER_IP: '100000', SSE_MAX_STREAMS_PER_KEY: '100000' } });
  try {
    const account = await createAccount(gw.url, `sse stop ${n}`);
    const payments = await Promise.all(Array.from({ length: PAYMENTS }, () => createReferenceIntent(account.api)));
    let signalledAt = 0;
    const since = () => performance.now() - signalledAt;
    const streams = Array.from({ length: STREAMS }, (_, i) => openStream(`${gw.url}/v1/payment_intents/${payments[i % PAYMENTS]!.id}/events`, account.sk, since));
    await Promise.all(streams.map((s) => s.ready));
    const exited = new Promise<number>((resolve) => gw.child.proc.once('exit', () => resolve(since())));
    signalledAt = performance.now();
    gw.child.proc.kill('SIGTERM');
    const ends = await Promise.all(streams.map((s) => s.ended));
    const exitMs = await exited;
    const at = ends.map((e) => e.at);
    const ms = (v: number) => `${Math.round(v)} ms`;
    console.log(
      `run ${n}: ${STREAMS} streams ended after SIGTERM p50 ${ms(percentile(at, 50))}, p99 ${ms(percentile(at, 99))}, max ${ms(Math.max(...at))}; ` +
        `restart comment ${ends.filter((e) => e.comment).length}/${STREAMS}, clean end ${ends.filter((e) => e.clean).length}/${STREAMS}; process exited after ${ms(exitMs)}`,
    );
  } finally {
    await gw.stop();
    await db.stop();
  }
}

for (let n = 1; n <= RUNS; n++) await run(n);
