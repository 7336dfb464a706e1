import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { deserialize, serialize } from 'bson';
import type { Schema } from 'mongoose';
import { runCommand } from '../../packages/embedded-mongo/src/commands';
import type { ServerInfo } from '../../packages/embedded-mongo/src/commands/context';
import { Engine } from '../../packages/embedded-mongo/src/engine';
import { EventModel } from '../../src/domain/events/eventModel';
import { IdempotencyModel } from '../../src/domain/idempotency/idempotencyModel';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { TimerModel } from '../../src/platform/timers/timerModel';

/**
 * CPU cost of the embedded engine's write path per statement, without the network:
 * `npx tsx bench/profile/engineWrites.ts` (env: PREFILL, ROUNDS, PASSES, BATCH, WATCHERS, COMPARE, CPU_PROFILE).
 *
 * Creates the gateway's collections with the indexes its mongoose schemas declare, pre-fills them
 * (PREFILL documents each), then runs ROUNDS rounds of what POST /payment_intents makes the engine do,
 * BATCH statements per command (as src/db/batching.ts groups them): insert idempotency keys, payment
 * intents with a one-event/one-timer outbox, events, timers; `$pull` the outbox; `$set` the events'
 * hooks_done; complete the idempotency keys. Commands are built as the driver sends them and decoded
 * from BSON first (timed separately), so the engine gets freshly decoded documents as over the wire.
 * Everything is deterministic (seeded ids, fixed clock values); PASSES passes of ROUNDS rounds each are
 * timed and the median pass is printed: wall time in the engine, process CPU time, and the wall time
 * without the GC pauses that fell into it (one long pause makes a cheap statement kind look slow).
 *
 * COMPARE=<dir> (another copy of src/db/embedded, e.g. from `git archive`) runs the same commands on a
 * second engine in the same process, command by command in alternation, and prints both: on a shared
 * machine whose load drifts from minute to minute, that compares two versions far more fairly than
 * separate runs do. WATCHERS (default 1) change streams per engine follow `events` the way the gateway's
 * event bus does, so the writes also pay for waking and filtering them.
 */
const PREFILL = Number(process.env.PREFILL ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 400);
const PASSES = Number(process.env.PASSES ?? 7);
const BATCH = Number(process.env.BATCH ?? 10);
const DB = 'bench';
/** CPU_PROFILE=file.cpuprofile: also write a V8 CPU profile of the timed passes (bench/profile/summarize.ts reads it). */
const PROFILE = process.env.CPU_PROFILE;
const COMPARE = process.env.COMPARE;
/** Change streams open on `events` per engine, as each gateway process's event bus keeps one (src/realtime/eventBus.ts). */
const WATCHERS = Number(process.env.WATCHERS ?? 1);
/** The `origin` of the stored events: the gateway process whose event bus watches (it skips its own events). */
const GATEWAY_PROCESS = 'gateway-1';

// --- deterministic data -------------------------------------------------------------------------

let seed = 0x2f6b1d3;
/** mulberry32: a small seeded PRNG, so every run builds the same documents. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function randomId(prefix: string, n = 24): string {
  let s = `${prefix}_`;
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return s;
}

const ACCOUNTS = Array.from({ length: 20 }, () => randomId('acct', 16));
/** The timed load comes from one account, as in `npm run bench`. */
const LOAD_ACCOUNT = ACCOUNTS[0]!;
const T0 = Date.UTC(2025, 0, 1);
let clock = T0;
let seq = 0;
let referenceNumber = 100_000_000;

/** An event's data as the gateway serialises it (~1.2 KB of JSON). */
function eventDataJson(intentId: string, account: string): string {
  const data = {
    object: {
      id: intentId,
      object: 'payment_intent',
      account,
      amount: 25_000,
      amount_refunded: 0,
      currency: 'AOA',
      payment_method: 'multicaixa_reference',
      status: 'requires_payment',
      failure_code: null,
      customer: { mobile: '+244923000000' },
      merchant_reference: 'order-bench',
      reference: { entity: '00123', number: String(referenceNumber), expires_at: new Date(clock + 86_400_000).toISOString() },
      fee: null,
      metadata: { order_id: 'bench', cart: randomId('cart', 12), channel: 'web' },
      livemode: false,
      payment_link_id: null,
      checkout_session_id: null,
      refunds: { object: 'list', data: [], has_more: false, url: `/v1/refunds?payment_intent=${intentId}` },
      next_action: { type: 'display_reference', display_reference: { entity: '00123', reference: String(referenceNumber), amount: 25_000 } },
      succeeded_at: null,
      created: Math.floor(clock / 1000),
      updated: Math.floor(clock / 1000),
    },
    previous_attributes: null,
    request: { id: randomId('req', 20), idempotency_key: randomId('idk', 20) },
  };
  return JSON.stringify(data);
}

interface Intent {
  doc: Record<string, unknown>;
  eventIds: string[];
  timerIds: string[];
}

function paymentIntent(account: string, withOutbox: boolean): Intent {
  clock += 1;
  const id = randomId('pi');
  const now = new Date(clock);
  referenceNumber++;
  const eventId = randomId('evt');
  const timerId = randomId('tmr', 32);
  const doc = {
    _id: id,
    account_id: account,
    seq: ++seq,
    version: 0,
    amount: 25_000,
    currency: 'AOA',
    payment_method: 'multicaixa_reference',
    status: 'requires_payment',
    failure_code: null,
    customer: { mobile: '+244923000000' },
    merchant_reference: 'order-bench',
    reference: { entity: '00123', number: String(referenceNumber), expires_at: new Date(clock + 86_400_000) },
    amount_refunded: 0,
    amount_reserved: 0,
    fee: null,
    fee_version: null,
    api_key_id: randomId('key', 16),
    metadata: { order_id: 'bench', cart: randomId('cart', 12), channel: 'web' },
    livemode: false,
    payment_link_id: null,
    checkout_session_id: null,
    refunds: [],
    succeeded_at: null,
    pending_events: withOutbox
      ? [{
          _id: eventId,
          account_id: account,
          type: 'payment_intent.created',
          created_at: now,
          seq: ++seq,
          payment_id: id,
          data_json: eventDataJson(id, account),
          queued_at: clock,
        }]
      : [],
    pending_timers: withOutbox
      ? [{
          _id: timerId,
          account_id: account,
          kind: 'reference.expire',
          ref_id: id,
          due_at: new Date(clock + 86_400_000),
          payload: { payment_id: id },
          dedupe_key: `expire:${id}`,
          queued_at: clock,
        }]
      : [],
    created_at: now,
    updated_at: now,
  };
  return { doc, eventIds: [eventId], timerIds: [timerId] };
}

function event(intent: Intent): Record<string, unknown> {
  const pe = (intent.doc.pending_events as Array<Record<string, unknown>>)[0]!;
  return {
    _id: pe._id,
    account_id: pe.account_id,
    type: pe.type,
    data_json: pe.data_json,
    created_at: pe.created_at,
    seq: pe.seq,
    payment_id: pe.payment_id,
    origin: GATEWAY_PROCESS,
    livemode: false,
    hooks_done: false,
    hooks_lease_until: clock + 30_000,
    hook_attempts: 1,
    hooks_failed: false,
    stored_at: clock,
  };
}

function timer(intent: Intent): Record<string, unknown> {
  const pt = (intent.doc.pending_timers as Array<Record<string, unknown>>)[0]!;
  return {
    _id: pt._id,
    account_id: pt.account_id,
    kind: pt.kind,
    ref_id: pt.ref_id,
    payload: pt.payload,
    due_at: pt.due_at,
    fire_at: (pt.due_at as Date).getTime(),
    offset_ms: 0,
    state: 'scheduled',
    lease_owner: null,
    lease_until: 0,
    attempts: 0,
    claimed_at: null,
    last_error: null,
    fired_by: null,
    created_at: new Date(clock),
    done_at: null,
  };
}

function idempotencyRecord(account: string): Record<string, unknown> {
  return {
    _id: randomId('idem', 43),
    account_id: account,
    method: 'POST',
    path: '/v1/payment_intents',
    key: randomId('key', 20),
    body_hash: randomId('h', 43),
    object_suffix: randomId('s', 24),
    state: 'in_progress',
    owner: `${randomId('o', 8)}-${randomId('o', 4)}-${randomId('o', 12)}`,
    lease_until: clock + 30_000,
    status: null,
    response_json: null,
    created_at: new Date(clock),
    completed_at: null,
  };
}

// --- engines ---------------------------------------------------------------------------------

const server: ServerInfo = {
  hostPort: 'bench:0',
  setName: 'rs0',
  processId: 'bench',
  connectionId: 1,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** An engine under test and the command entry point of the same copy of the code. */
interface Target {
  label: string;
  engine: Engine;
  runCommand: typeof runCommand;
}

const targets: Target[] = [{ label: 'this tree', engine: new Engine(), runCommand }];
if (COMPARE) {
  const dir = path.resolve(COMPARE);
  const other = (await import(path.join(dir, 'engine.ts'))) as { Engine: typeof Engine };
  const commands = (await import(path.join(dir, 'commands/index.ts'))) as { runCommand: typeof runCommand };
  targets.push({ label: 'COMPARE', engine: new other.Engine(), runCommand: commands.runCommand });
}

/** As the driver sends it: `$db` and the statements encoded into one OP_MSG body, decoded by the engine. */
function wire(cmd: Record<string, unknown>): Buffer {
  return Buffer.from(serialize({ ...cmd, $db: DB }));
}
const DECODE_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;

async function runOn(t: Target, cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
  const reply = await t.runCommand(t.engine, DB, cmd, server);
  if (reply.ok !== 1 || reply.writeErrors) throw new Error(`command failed: ${JSON.stringify(reply)}`);
  return reply;
}

/** Runs an encoded command on every target, each decoding its own copy (stored documents are not shared). */
async function runAll(buf: Buffer): Promise<void> {
  for (const t of targets) await runOn(t, deserialize(buf, DECODE_OPTS));
}

/** createIndexes specs from a mongoose schema, named as the driver names them. */
function indexSpecs(schema: Schema): Array<Record<string, unknown>> {
  return schema.indexes().map(([key, options]) => {
    const spec: Record<string, unknown> = { key, name: Object.entries(key).map(([f, d]) => `${f}_${String(d)}`).join('_') };
    if (options.unique) spec.unique = true;
    if (options.sparse) spec.sparse = true;
    return spec;
  });
}

const COLLECTIONS = {
  intents: PaymentModel.collection.collectionName,
  events: EventModel.collection.collectionName,
  timers: TimerModel.collection.collectionName,
  idempotency: IdempotencyModel.collection.collectionName,
};
for (const [coll, schema] of [
  [COLLECTIONS.intents, PaymentModel.schema],
  [COLLECTIONS.events, EventModel.schema],
  [COLLECTIONS.timers, TimerModel.schema],
  [COLLECTIONS.idempotency, IdempotencyModel.schema],
] as const) {
  await runAll(wire({ create: coll }));
  const specs = indexSpecs(schema);
  if (specs.length) await runAll(wire({ createIndexes: coll, indexes: specs }));
}

// Pre-fill: settled intents (empty outbox), their events (hooks done) and timers, completed keys.
for (let done = 0; done < PREFILL; done += 1000) {
  const intents: Intent[] = [];
  for (let i = 0; i < 1000; i++) intents.push(paymentIntent(ACCOUNTS[i % ACCOUNTS.length]!, true));
  const events = intents.map((it) => ({ ...event(it), hooks_done: true, hooks_lease_until: 0 }));
  const timers = intents.map(timer);
  const keys = intents.map((it) => ({ ...idempotencyRecord(it.doc.account_id as string), state: 'completed', status: 201 }));
  for (const it of intents) it.doc.pending_events = it.doc.pending_timers = [];
  // Through BSON like everything else: stored strings are then flat, as the engine's always are.
  await runAll(wire({ insert: COLLECTIONS.intents, documents: intents.map((it) => it.doc), ordered: false }));
  await runAll(wire({ insert: COLLECTIONS.events, documents: events, ordered: false }));
  await runAll(wire({ insert: COLLECTIONS.timers, documents: timers, ordered: false }));
  await runAll(wire({ insert: COLLECTIONS.idempotency, documents: keys, ordered: false }));
}

// --- the timed load -------------------------------------------------------------------------

const KINDS = [
  'insert idempotency_keys',
  'insert payment_intents',
  'insert events',
  'insert timers',
  'update payment_intents $pull outbox',
  'update events $set hooks_done',
  'update idempotency_keys $set completed',
] as const;
type Kind = (typeof KINDS)[number];

/** One round's commands, already encoded as the driver would send them. */
function roundCommands(): Array<[Kind, Buffer]> {
  const intents = Array.from({ length: BATCH }, () => paymentIntent(LOAD_ACCOUNT, true));
  const keys = intents.map(() => idempotencyRecord(LOAD_ACCOUNT));
  const upd = (q: unknown, u: unknown) => ({ q, u, upsert: false, multi: false });
  return [
    ['insert idempotency_keys', wire({ insert: COLLECTIONS.idempotency, documents: keys, ordered: false })],
    ['insert payment_intents', wire({ insert: COLLECTIONS.intents, documents: intents.map((it) => it.doc), ordered: false })],
    ['insert events', wire({ insert: COLLECTIONS.events, documents: intents.map(event), ordered: false })],
    ['insert timers', wire({ insert: COLLECTIONS.timers, documents: intents.map(timer), ordered: false })],
    ['update payment_intents $pull outbox', wire({
      update: COLLECTIONS.intents,
      updates: intents.map((it) => upd({ _id: it.doc._id }, {
        $pull: { pending_events: { _id: { $in: it.eventIds } }, pending_timers: { _id: { $in: it.timerIds } } },
      })),
      ordered: false,
    })],
    ['update events $set hooks_done', wire({
      update: COLLECTIONS.events,
      updates: intents.map((it) => upd({ _id: it.eventIds[0] }, { $set: { hooks_done: true, hooks_lease_until: 0 } })),
      ordered: false,
    })],
    ['update idempotency_keys $set completed', wire({
      update: COLLECTIONS.idempotency,
      updates: keys.map((k) => upd(
        { _id: k._id, owner: k.owner, state: 'in_progress' },
        { $set: { state: 'completed', status: 201, response_json: (intents[0]!.doc.pending_events as Array<{ data_json: string }>)[0]!.data_json, completed_at: new Date(clock) } },
      )),
      ordered: false,
    })],
  ];
}

/** Per statement kind, summed over a pass. */
interface Timing {
  engineNs: Map<Kind, number>;
  /** The main-thread GC pauses that fell inside the engine's time (part of engineNs). */
  gcNs: Map<Kind, number>;
  /** CPU time of the process (all threads, so concurrent GC too) while the engine ran: unlike the wall
   * time, not inflated by waiting for a core on a shared machine. */
  engineCpuUs: Map<Kind, number>;
  decodeNs: Map<Kind, number>;
}

interface Pass {
  /** One per target. */
  timings: Timing[];
  wallMs: number;
  /** Main-thread GC pauses during the pass (they land in whichever statement allocated last). */
  gcMs: number;
}

let gcMs = 0;
/** GC pauses of the current pass: start (performance.now() time) and duration, ms. */
let gcPauses: Array<[number, number]> = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcPauses.push([e.startTime, e.duration]);
  }
}).observe({ entryTypes: ['gc'] });

const add = (m: Map<Kind, number>, k: Kind, v: number) => m.set(k, m.get(k)! + v);

async function pass(rounds: number): Promise<Pass> {
  // Built up front so that building them is not timed (nor its garbage collected mid-pass, mostly).
  const all = Array.from({ length: rounds }, roundCommands);
  const zero = () => new Map<Kind, number>(KINDS.map((k) => [k, 0]));
  const timings: Timing[] = targets.map(() => ({ engineNs: zero(), gcNs: zero(), engineCpuUs: zero(), decodeNs: zero() }));
  /** Where each command ran (ms, performance.now()), in order, to find the GC pauses inside it. */
  const spans: Array<{ from: number; to: number; timing: Timing; kind: Kind }> = [];
  const start = performance.now();
  const gcBefore = gcMs;
  gcPauses = [];
  for (let r = 0; r < all.length; r++) {
    for (const [kind, buf] of all[r]!) {
      // With two targets, alternate which goes first, so neither always runs on a cache the other warmed.
      for (let j = 0; j < targets.length; j++) {
        const i = (j + r) % targets.length;
        const t = timings[i]!;
        const t0 = process.hrtime.bigint();
        const cmd = deserialize(buf, DECODE_OPTS);
        const cpu = process.cpuUsage();
        const from = performance.now();
        const t1 = process.hrtime.bigint();
        const reply = await runOn(targets[i]!, cmd);
        const t2 = process.hrtime.bigint();
        spans.push({ from, to: performance.now(), timing: t, kind });
        const used = process.cpuUsage(cpu);
        if (kind.startsWith('update') && reply.nModified !== BATCH) throw new Error(`${kind}: ${JSON.stringify(reply)}`);
        add(t.engineCpuUs, kind, used.user + used.system);
        add(t.decodeNs, kind, Number(t1 - t0));
        add(t.engineNs, kind, Number(t2 - t1));
      }
    }
  }
  // GC entries reach the observer later (not even by the next setImmediate): wait for them.
  await new Promise((r) => setTimeout(r, 100));
  // A pause lands in whichever command happened to allocate when the heap filled up: a few long
  // ones make a cheap statement kind look slow at random, so they are also reported apart.
  let s = 0;
  for (const [at, ms] of gcPauses.sort((a, b) => a[0] - b[0])) {
    while (s < spans.length && spans[s]!.to < at) s++;
    const span = spans[s];
    if (span && span.from <= at) add(span.timing.gcNs, span.kind, ms * 1e6);
  }
  return { timings, wallMs: performance.now() - start, gcMs: gcMs - gcBefore };
}

/** The timed passes only (not the set-up and pre-fill, as `node --cpu-prof` would include). */
async function startProfiler(): Promise<{ stop(file: string): Promise<string> }> {
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      return file;
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// The event bus's change stream (src/realtime/eventBus.ts): inserts into events from other processes,
// read with the driver's getMore loop (maxAwaitTimeMS 250).
let watching = true;
const watchers: Array<Promise<void>> = [];
for (const t of targets) {
  for (let w = 0; w < WATCHERS; w++) {
    const pipeline = [{ $changeStream: {} }, { $match: { operationType: 'insert', 'fullDocument.origin': { $ne: GATEWAY_PROCESS } } }];
    const opened = await runOn(t, { aggregate: COLLECTIONS.events, pipeline, cursor: {} });
    const id = (opened.cursor as { id: unknown }).id;
    watchers.push((async () => {
      while (watching) await runOn(t, { getMore: id, collection: COLLECTIONS.events, maxTimeMS: 250 });
    })());
  }
}

await pass(Math.max(1, ROUNDS >> 2)); // warm-up
const profiler = PROFILE ? await startProfiler() : undefined;
const passes: Pass[] = [];
for (let p = 0; p < PASSES; p++) passes.push(await pass(ROUNDS));
if (profiler) console.log(`CPU profile of the timed passes: ${await profiler.stop(PROFILE!)}`);

const perStatement = (ns: number) => ns / ROUNDS / BATCH / 1000;
const statements = ROUNDS * BATCH * KINDS.length;
console.log(`engine write path: ${PREFILL} documents pre-filled per collection, ${ROUNDS} rounds x ${BATCH} statements per command, ${WATCHERS} change stream(s) on events, median of ${PASSES} passes`);
/** Median µs per statement of one kind (or of all kinds) on one target. */
const engineUs = (i: number, k?: Kind): number =>
  k ? median(passes.map((p) => perStatement(p.timings[i]!.engineNs.get(k)!))) : KINDS.reduce((sum, x) => sum + engineUs(i, x), 0) / KINDS.length;
const exclGcUs = (i: number, k?: Kind): number =>
  k
    ? median(passes.map((p) => perStatement(p.timings[i]!.engineNs.get(k)! - p.timings[i]!.gcNs.get(k)!)))
    : KINDS.reduce((sum, x) => sum + exclGcUs(i, x), 0) / KINDS.length;
const cpuUs = (i: number, k?: Kind): number =>
  k ? median(passes.map((p) => perStatement(p.timings[i]!.engineCpuUs.get(k)! * 1000))) : KINDS.reduce((sum, x) => sum + cpuUs(i, x), 0) / KINDS.length;
for (let i = 0; i < targets.length; i++) {
  if (targets.length > 1) console.log(`\n${targets[i]!.label}${i ? ` (${COMPARE})` : ''}:`);
  console.log(`${'statement'.padEnd(42)} ${'engine µs'.padStart(10)} ${'(min-max)'.padStart(14)} ${'cpu µs'.padStart(8)} ${'excl. GC'.padStart(9)} ${'decode µs'.padStart(10)}`);
  for (const k of KINDS) {
    const e = passes.map((p) => perStatement(p.timings[i]!.engineNs.get(k)!));
    const d = passes.map((p) => perStatement(p.timings[i]!.decodeNs.get(k)!));
    console.log(
      `${k.padEnd(42)} ${engineUs(i, k).toFixed(1).padStart(10)} ${`(${Math.min(...e).toFixed(1)}-${Math.max(...e).toFixed(1)})`.padStart(14)} ${cpuUs(i, k).toFixed(1).padStart(8)} ${exclGcUs(i, k).toFixed(1).padStart(9)} ${median(d).toFixed(1).padStart(10)}`,
    );
  }
  console.log(`all statements: ${engineUs(i).toFixed(1)} µs each in the engine (cpu ${cpuUs(i).toFixed(1)} µs, ${exclGcUs(i).toFixed(1)} µs without GC pauses), ${Math.round(1e6 / engineUs(i))} statements/s (engine only)`);
}
if (targets.length === 1) {
  console.log(`wall, decode included: ${Math.round(statements / (median(passes.map((p) => p.wallMs)) / 1000))} statements/s`);
  console.log(`GC pauses (decode included): ${((median(passes.map((p) => p.gcMs)) * 1000) / statements).toFixed(1)} µs per statement`);
} else {
  console.log(`\n${'µs per statement (engine; cpu; excl. GC)'.padEnd(42)} ${'COMPARE'.padStart(18)} ${'this tree'.padStart(18)} ${'change'.padStart(8)} ${'excl. GC'.padStart(9)}`);
  for (const k of [...KINDS, undefined]) {
    const cell = (i: number) => `${engineUs(i, k).toFixed(1)}; ${cpuUs(i, k).toFixed(1)}; ${exclGcUs(i, k).toFixed(1)}`.padStart(18);
    const change = (f: (i: number, k?: Kind) => number) => `${(((f(0, k) - f(1, k)) / f(1, k)) * 100).toFixed(0)} %`;
    console.log(`${(k ?? 'all statements').padEnd(42)} ${cell(1)} ${cell(0)} ${change(engineUs).padStart(8)} ${change(exclGcUs).padStart(9)}`);
  }
  console.log(`GC pauses, both engines together: ${((median(passes.map((p) => p.gcMs)) * 1000) / statements / 2).toFixed(1)} µs per statement each`);
}
watching = false;
await Promise.all(watchers);
for (const t of targets) await t.engine.close();
