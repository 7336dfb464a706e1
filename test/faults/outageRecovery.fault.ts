import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from 'graphql-ws';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { freePort, spawnEngine, spawnGateway, type EngineProcess, type GatewayProcess } from '../support/processes';
import { expressBody, referenceBody } from '../support/payments';
import { openSse, type SseClient } from '../streams/support/sseClient';
import { wsClient } from '../graphql/support';
import { cookieGql, cookieWsClient, signIn } from '../dashboard/sessionSupport';
import { sleep, timed, waitFor } from './support/fixtures';

/**
 * What lives across a database outage (issue 41, "Recovery without a restart"): the database process
 * killed under two gateways on MONGODB_URI (A takes the writes, B holds the streams, so that A's events
 * reach B's subscribers only through B's event bus, i.e. its change stream), then started again on the
 * same address and data directory, whose change history is gone with the process. Twice: an outage
 * shorter than the driver's timeouts (3 s) and one longer than all of them (45 s).
 *
 * - B's event bus carries every event of the account exactly once across it, in order per payment:
 *   payments whose steps fall before, in and after the outage, and payments created on A right after
 *   it, while B's stream may still be reopening (the gap B replays from the events collection). Counted
 *   on a graphql-ws `events` subscription and on one SSE stream per payment, all opened before.
 * - A graphql-ws `paymentIntentUpdated` subscription opened before, over a dashboard session's socket,
 *   receives the change made after; a subscribe on that socket during the outage gets the GraphQL error
 *   `service_unavailable` and the socket stays open.
 * - The dashboard session: during the outage a request made with it answers 503 `service_unavailable`
 *   (not 401: the browser keeps its session); after, the same cookie works.
 * - B's bus recovered as a change stream (it did not fall back to polling), and said so in its log.
 */
const ANSWER_WITHIN_MS = 5_000;
/** A gateway's process id as its log lines say it (for the diagnostics of a failure). */
const PROCESS_HINT = (g: GatewayProcess) => String(g.pid);
/** How many express payments are created before the outage (their +5 s success falls in it or after) and right after it. */
const BEFORE = 3;
const AFTER = 3;

let dataDir: string;
let port: number;
let engine: EngineProcess;
/** Takes the writes. */
let a: GatewayProcess;
/** Holds the streams and the session. */
let b: GatewayProcess;
let account: TestAccount;

const startEngine = () => spawnEngine({ DATA_DIR: dataDir, DB_PORT: String(port) });

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pgw-outage-recovery-'));
  port = await freePort();
  engine = await startEngine();
  [a, b] = await Promise.all([spawnGateway(engine.uri), spawnGateway(engine.uri)]);
  account = await createAccount(a.url, 'outage recovery');
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await engine?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

interface Message {
  data?: any;
  errors?: Array<{ extensions?: { code?: string } }>;
}

/** A subscription that records its messages (and how it ended) without ending itself. */
function record(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const messages: Message[] = [];
  let ended: string | null = null;
  const stop = client.subscribe(
    { query, variables },
    {
      next: (m) => void messages.push(m as Message),
      error: (err: unknown) => {
        // GraphQL errors (an array), or the socket's CloseEvent or an Error, whose fields JSON leaves out.
        const e = err as { code?: number; reason?: string; message?: string };
        const said = Array.isArray(err) ? JSON.stringify(err) : e?.code !== undefined ? `socket closed ${e.code} ${e.reason ?? ''}` : String(e?.message ?? JSON.stringify(err));
        ended = `error: ${said.slice(0, 300)}`;
      },
      complete: () => {
        ended = 'complete';
      },
    },
  );
  return { messages, stop, ended: () => ended };
}

const EVENTS = 'subscription { events { id type data } }';
const UPDATES = 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { snapshot eventType eventId paymentIntent { id status } } }';

async function createExpress(): Promise<string> {
  const res = await account.api.post('/payment_intents', expressBody(), { idempotencyKey: idempotencyKey() });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/** The account's stored events about these payments, oldest first. */
async function storedEvents(paymentIds: Set<string>): Promise<Array<{ id: string; type: string; paymentId: string }>> {
  const res = await account.api.get('/events?limit=100');
  expect(res.status, res.text).toBe(200);
  return [...res.body.data]
    .reverse()
    .filter((e: any) => paymentIds.has(e.data.id))
    .map((e: any) => ({ id: e.id, type: e.type, paymentId: e.data.id }));
}

describe.each([
  ['shorter than the driver timeouts', 3_000],
  ['longer than every driver timeout', 45_000],
])('database away for an outage %s (%i ms)', (_what, outageMs) => {
  it('the event bus, subscriptions, SSE streams and dashboard sessions carry on: every event once, in order', async () => {
    const session = await signIn(b.url, account.sk);
    expect(session.status, session.text).toBe(200);
    const cookie = session.cookie!;

    // On B, opened before the outage: the account's events, and a dashboard socket (the session's cookie).
    const keySocket = wsClient(b.url, account.sk);
    const closes: Array<[number, string]> = [];
    const dashboardSocket = cookieWsClient(b.url, cookie, b.url, (code, reason) => closes.push([code, reason]));
    onTestFinished(async () => {
      await keySocket.dispose();
      await dashboardSocket.dispose();
    });
    const events = record(keySocket, EVENTS);
    // graphql-ws does not acknowledge a subscribe: the subscription is live once an event made after it
    // arrives. Probes (reference payments: no rail step follows) until one does; an event stored
    // before the subscription reached B's bus is never sent to it, so the payments followed come after.
    for (let attempt = 0; ; attempt++) {
      const probe = await account.api.post('/payment_intents', referenceBody(), { idempotencyKey: idempotencyKey() });
      expect(probe.status, probe.text).toBe(201);
      const live = await waitFor(async () => events.messages.some((m) => m.data?.events?.data?.id === probe.body.id), Boolean, 5_000).catch(() => false);
      if (live) break;
      expect(attempt, 'the events subscription on B never went live').toBeLessThan(5);
    }
    const payments: string[] = [];
    payments.push(await createExpress());

    const streams = new Map<string, SseClient>();
    const openStream = async (id: string) => {
      const stream = await openSse(`${b.url}/v1/payment_intents/${id}/events`, { authorization: `Bearer ${account.sk}` });
      expect(stream.status).toBe(200);
      onTestFinished(() => stream.close());
      streams.set(id, stream);
    };
    await openStream(payments[0]!);
    // The others a second apart: their steps (+5 s) fall before, in and after the outage.
    for (let i = 1; i < BEFORE; i++) {
      await sleep(1_000);
      payments.push(await createExpress());
      await openStream(payments[i]!);
    }
    const followed = payments[BEFORE - 1]!;
    const updates = record(dashboardSocket, UPDATES, { id: followed });
    await waitFor(async () => updates.messages.length, (n) => n > 0, 15_000);
    expect(updates.messages[0]?.data?.paymentIntentUpdated?.snapshot).toBe(true);

    const logFrom = b.output().length;
    await engine.kill();
    const downAt = Date.now();

    // A request made with the session: 503, not 401 (a browser that got a 401 would sign its person out).
    const described = await timed(() => fetch(`${b.url}/dashboard/session`, { headers: { cookie } }));
    const describedBody = (await described.value.json()) as any;
    // What the gateway logged of it (the error behind an answer other than 503), should this fail.
    if (described.value.status !== 503) console.error(`gateway B's log since the kill:\n${b.output().slice(logFrom)}`);
    expect(described.value.status, JSON.stringify(describedBody)).toBe(503);
    expect(describedBody.error.code).toBe('service_unavailable');
    expect(Number(described.value.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(described.ms).toBeLessThan(ANSWER_WITHIN_MS);
    const query = await timed(() => cookieGql(b.url, cookie, '{ account { id } }'));
    expect(query.value.status, query.value.text).toBe(503);
    expect(query.value.body.errors?.[0]?.extensions?.code).toBe('service_unavailable');
    expect(query.ms).toBeLessThan(ANSWER_WITHIN_MS);
    // A subscribe on the dashboard's socket: refused with service_unavailable, the socket kept.
    const refused = record(dashboardSocket, UPDATES, { id: payments[0] });
    await waitFor(async () => refused.ended(), (e) => e !== null, ANSWER_WITHIN_MS + 2_000);
    expect(refused.ended()).toContain('service_unavailable');

    await sleep(Math.max(0, outageMs - (Date.now() - downAt)));
    engine = await startEngine();
    const backAt = Date.now();
    // Payments created as soon as A serves again: their events reach B while its stream may still be reopening.
    await waitFor(async () => (await fetch(`${a.url}/readyz`)).status, (status) => status === 200, 30_000);
    for (let i = 0; i < AFTER; i++) payments.push(await createExpress());
    await waitFor(async () => (await fetch(`${b.url}/readyz`)).status, (status) => status === 200, 30_000);
    console.log(`outage recovery ${outageMs} ms: A and B ready ${Date.now() - backAt} ms after the database restarted`);

    const ids = new Set(payments);
    for (const id of payments) {
      await waitFor(async () => (await account.api.get(`/payment_intents/${id}`)).body.status, (status) => status === 'SUCCEEDED', 30_000);
    }
    // Each payment's creation and success, at least. A payment can read SUCCEEDED a moment before its
    // event is stored (the outbox moves it right after the state change; the sweeper, 2-3 s later, when
    // that move failed as the database came back).
    const stored = await waitFor(() => storedEvents(ids), (events) => events.length >= 2 * payments.length, 30_000);
    const storedIds = stored.map((e) => e.id);

    // The events subscription: every one of them, then a moment for a straggler that should not exist.
    const received = () => events.messages.map((m) => m.data?.events).filter((e) => e && ids.has(e.data.id));
    await waitFor(async () => new Set(received().map((e: any) => e.id)).size, (n) => n === storedIds.length, 30_000).catch(async (err: Error) => {
      // Which events B's bus did not carry, and what it said: the cause is in there.
      const got = new Set(received().map((e: any) => e.id));
      const missing = stored.filter((e) => !got.has(e.id));
      const extra = [...got].filter((id) => !storedIds.includes(id as string));
      const busLog = b.output().slice(logFrom).split('\n').filter((l) => l.includes('event bus')).map((l) => l.slice(0, 300));
      const errors = events.messages.filter((m) => m.errors);
      const dbClient = await MongoClient.connect(engine.uri);
      const db = dbClient.db();
      const docs = await db.collection('events').find({}, { projection: { type: 1, seq: 1, origin: 1, stored_at: 1, payment_id: 1 } }).sort({ seq: 1 }).toArray();
      const counter = await db.collection('sequences').find({}).toArray();
      await dbClient.close();
      const seenMessages = events.messages.map((m) => (m.data?.events ? `${m.data.events.id} ${m.data.events.type} ${m.data.events.data.id}` : JSON.stringify(m).slice(0, 200)));
      throw new Error(
        `${err.message}\nmissing on B's events subscription: ${JSON.stringify(missing.map((e) => ({ ...e, payment: payments.indexOf(e.paymentId) })))}` +
          `\nreceived but not stored: ${JSON.stringify(extra)}\nerror messages: ${JSON.stringify(errors).slice(0, 1000)}\nB's event bus said:\n${busLog.join('\n')}` +
          `\nB's subscription got:\n${seenMessages.join('\n')}\nstored: ${JSON.stringify(docs)}\ncounters: ${JSON.stringify(counter)}\npayments: ${payments.join(' ')}\nA is ${PROCESS_HINT(a)}, B is ${PROCESS_HINT(b)}`,
      );
    });
    await sleep(2_000);
    expect(events.ended()).toBeNull();
    expect(events.messages.filter((m) => m.errors)).toEqual([]);
    const got = received().map((e: any) => e.id);
    expect(got).toHaveLength(storedIds.length);
    expect(new Set(got)).toEqual(new Set(storedIds));
    // In order per payment: each payment's events in the order they were stored.
    for (const id of payments) {
      const mine = new Set(stored.filter((e) => e.paymentId === id).map((e) => e.id));
      expect(got.filter((e: string) => mine.has(e))).toEqual(storedIds.filter((e) => mine.has(e)));
    }

    // Each SSE stream opened before: its payment's events once each, in order, ending with the outcome.
    for (const [id, stream] of streams) {
      await stream.waitFor((messages) => messages.some((m) => m.data.includes('SUCCEEDED')), 30_000);
      await stream.ended;
      const sent = stream.messages.filter((m) => m.event !== 'snapshot').map((m) => m.id);
      // What the stream carries: the events whose data is the intent.
      const expected = stored.filter((e) => e.paymentId === id && (e.type.startsWith('payment.') || e.type === 'reference.paid')).map((e) => e.id);
      // The snapshot may already hold the first event (id = the latest event when it opened).
      const snapshotId = stream.messages.find((m) => m.event === 'snapshot')?.id;
      expect(sent).toEqual(expected.slice(snapshotId ? expected.indexOf(snapshotId) + 1 : 0));
    }

    // The dashboard's subscription carried the change, once, and its socket was never closed.
    await waitFor(async () => updates.messages.some((m) => m.data?.paymentIntentUpdated?.paymentIntent.status === 'SUCCEEDED'), Boolean, 30_000);
    const eventIds = updates.messages.map((m) => m.data?.paymentIntentUpdated?.eventId).filter(Boolean);
    expect(new Set(eventIds).size).toBe(eventIds.length);
    expect(updates.ended()).toBeNull();
    expect(closes).toEqual([]);

    // The same session works after, over HTTP and on its socket.
    const after = await fetch(`${b.url}/dashboard/session`, { headers: { cookie } });
    expect(after.status).toBe(200);
    expect(((await after.json()) as any).account.id).toBe(account.id);
    const afterQuery = await cookieGql(b.url, cookie, 'query($id: ID!) { paymentIntent(id: $id) { status } }', { id: followed });
    expect(afterQuery.status, afterQuery.text).toBe(200);
    expect(afterQuery.body.data.paymentIntent.status).toBe('SUCCEEDED');
    const resubscribed = record(dashboardSocket, UPDATES, { id: followed });
    await waitFor(async () => resubscribed.messages.length, (n) => n > 0, 15_000);
    expect(resubscribed.messages[0]?.data?.paymentIntentUpdated?.paymentIntent.status).toBe('SUCCEEDED');

    // B's bus came back as a change stream, and said how (the engine's restart lost its change history).
    const log = b.output().slice(logFrom);
    const said = log
      .split('\n')
      .filter((line) => line.includes('event bus'))
      .map((line) => {
        try {
          const entry = JSON.parse(line) as { msg: string; afterMs?: number; recovered?: string };
          return `${entry.msg}${entry.afterMs === undefined ? '' : ` after ${entry.afterMs} ms`}${entry.recovered ? ` (${entry.recovered})` : ''}`;
        } catch {
          return line.slice(0, 200);
        }
      });
    console.log(`outage recovery ${outageMs} ms, gateway B's event bus said:\n  ${said.join('\n  ')}`);
    expect(log).toMatch(/event bus change stream (resumed from its resume token|reopened from now)/);
    expect(log).not.toContain('switching to polling');
  });
});
