import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { deserialize, serialize } from 'bson';
import type { Schema } from 'mongoose';
import { runCommand } from '../../src/db/embedded/commands';
import type { ServerInfo } from '../../src/db/embedded/commands/context';
import { Engine } from '../../src/db/embedded/engine';
import { EventModel } from '../../src/domain/events/event.model';
import { IdempotencyModel } from '../../src/domain/idempotency/idempotency.model';
import { PaymentModel } from '../../src/domain/payments/payment.model';
import { TimerModel } from '../../src/jobs/timers/timer.model';

/**
 * CPU cost of the embedded engine's write path per statement, without the network:
 * `npx tsx bench/profile/engineWrites.ts` (env: PREFILL, ROUNDS, PASSES, BATCH, CPU_PROFILE).
 *
 * Creates the gateway's collections with the indexes its mongoose schemas declare, pre-fills them
 * (PREFILL documents each), then runs ROUNDS rounds of what POST /payment_intents makes the engine do,
 * BATCH statements per command (as src/db/batching.ts groups them): insert idempotency keys, payment
 * intents with a one-event/one-timer outbox, events, timers; `$pull` the outbox; `$set` the events'
 * hooks_done; complete the idempotency keys. Commands are built as the driver sends them and decoded
 * from BSON first (timed separately), so the engine gets freshly decoded documents as over the wire.
 * Everything is deterministic (seeded ids, fixed clock values); PASSES passes of ROUNDS rounds each are
 * timed and the median pass is printed.
 */
const PREFILL = Number(process.env.PREFILL ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 400);
const PASSES = Number(process.env.PASSES ?? 7);
const BATCH = Number(process.env.BATCH ?? 10);
const DB = 'bench';
/** CPU_PROFILE=file.cpuprofile: also write a V8 CPU profile of the timed passes (bench/profile/summarize.ts reads it). */
const PROFILE = process.env.CPU_PROFILE;

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

// --- engine ---------------------------------------------------------------------------------

const engine = new Engine();
const server: ServerInfo = {
  hostPort: 'bench:0',
  setName: 'rs0',
  processId: 'bench',
  connectionId: 1,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** As the driver sends it: `$db` and the statements encoded into one OP_MSG body, decoded by the engine. */
function wire(cmd: Record<string, unknown>): Buffer {
  return Buffer.from(serialize({ ...cmd, $db: DB }));
}
const DECODE_OPTS = { promoteLongs: true, promoteValues: true, promoteBuffers: false } as const;

async function run(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
  const reply = await runCommand(engine, DB, cmd, server);
  if (reply.ok !== 1 || reply.writeErrors) throw new Error(`command failed: ${JSON.stringify(reply)}`);
  return reply;
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
  await run({ create: coll });
  const specs = indexSpecs(schema);
  if (specs.length) await run({ createIndexes: coll, indexes: specs });
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
  await run(deserialize(wire({ insert: COLLECTIONS.intents, documents: intents.map((it) => it.doc), ordered: false }), DECODE_OPTS));
  await run(deserialize(wire({ insert: COLLECTIONS.events, documents: events, ordered: false }), DECODE_OPTS));
  await run(deserialize(wire({ insert: COLLECTIONS.timers, documents: timers, ordered: false }), DECODE_OPTS));
  await run(deserialize(wire({ insert: COLLECTIONS.idempotency, documents: keys, ordered: false }), DECODE_OPTS));
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

interface Pass {
  engineNs: Map<Kind, number>;
  /** CPU time of the process (all threads, so concurrent GC too) while the engine ran: unlike the wall
   * time, not inflated by waiting for a core on a shared machine. */
  engineCpuUs: Map<Kind, number>;
  decodeNs: Map<Kind, number>;
  wallMs: number;
  /** Main-thread GC pauses during the pass (they land in whichever statement allocated last). */
  gcMs: number;
}

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

async function pass(rounds: number): Promise<Pass> {
  // Built up front so that building them is not timed (nor its garbage collected mid-pass, mostly).
  const all = Array.from({ length: rounds }, roundCommands);
  const engineNs = new Map<Kind, number>(KINDS.map((k) => [k, 0]));
  const decodeNs = new Map<Kind, number>(KINDS.map((k) => [k, 0]));
  const engineCpuUs = new Map<Kind, number>(KINDS.map((k) => [k, 0]));
  const start = performance.now();
  const gcBefore = gcMs;
  for (const round of all) {
    for (const [kind, buf] of round) {
      const t0 = process.hrtime.bigint();
      const cmd = deserialize(buf, DECODE_OPTS);
      const cpu = process.cpuUsage();
      const t1 = process.hrtime.bigint();
      const reply = await run(cmd);
      const t2 = process.hrtime.bigint();
      const used = process.cpuUsage(cpu);
      engineCpuUs.set(kind, engineCpuUs.get(kind)! + used.user + used.system);
      if (kind.startsWith('update') && reply.nModified !== BATCH) throw new Error(`${kind}: ${JSON.stringify(reply)}`);
      decodeNs.set(kind, decodeNs.get(kind)! + Number(t1 - t0));
      engineNs.set(kind, engineNs.get(kind)! + Number(t2 - t1));
    }
  }
  // GC entries are delivered asynchronously: let the observer catch up before reading the total.
  await new Promise((r) => setImmediate(r));
  return { engineNs, engineCpuUs, decodeNs, wallMs: performance.now() - start, gcMs: gcMs - gcBefore };
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

await pass(Math.max(1, ROUNDS >> 2)); // warm-up
const profiler = PROFILE ? await startProfiler() : undefined;
const passes: Pass[] = [];
for (let p = 0; p < PASSES; p++) passes.push(await pass(ROUNDS));
if (profiler) console.log(`CPU profile of the timed passes: ${await profiler.stop(PROFILE!)}`);

const perStatement = (ns: number) => ns / ROUNDS / BATCH / 1000;
console.log(`engine write path: ${PREFILL} documents pre-filled per collection, ${ROUNDS} rounds x ${BATCH} statements per command, median of ${PASSES} passes`);
console.log(`${'statement'.padEnd(42)} ${'engine µs'.padStart(10)} ${'(min-max)'.padStart(14)} ${'cpu µs'.padStart(8)} ${'decode µs'.padStart(10)}`);
let totalNs = 0;
let totalCpuUs = 0;
for (const k of KINDS) {
  const e = passes.map((p) => perStatement(p.engineNs.get(k)!));
  const c = passes.map((p) => perStatement(p.engineCpuUs.get(k)! * 1000));
  const d = passes.map((p) => perStatement(p.decodeNs.get(k)!));
  totalNs += median(passes.map((p) => p.engineNs.get(k)!));
  totalCpuUs += median(passes.map((p) => p.engineCpuUs.get(k)!));
  console.log(
    `${k.padEnd(42)} ${median(e).toFixed(1).padStart(10)} ${`(${Math.min(...e).toFixed(1)}-${Math.max(...e).toFixed(1)})`.padStart(14)} ${median(c).toFixed(1).padStart(8)} ${median(d).toFixed(1).padStart(10)}`,
  );
}
const statements = ROUNDS * BATCH * KINDS.length;
console.log(`all statements: ${(totalNs / statements / 1000).toFixed(1)} µs each in the engine (cpu ${(totalCpuUs / statements).toFixed(1)} µs), ${Math.round(statements / (totalNs / 1e9))} statements/s (engine only)`);
console.log(`wall, decode included: ${Math.round(statements / (median(passes.map((p) => p.wallMs)) / 1000))} statements/s`);
console.log(`GC pauses (decode included): ${(median(passes.map((p) => p.gcMs)) * 1000 / statements).toFixed(1)} µs per statement`);
await engine.close();
