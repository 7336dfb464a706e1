import type { Connection } from '../connection';
import { EVENT_TYPES } from '../eventTypes';
import { EventSocket, graphqlWsUrl, type GatewayEvent } from '../eventSocket';
import type { Output } from '../output';
import { CATCH_UP_LIMITS, collectMissed } from './catchUp';
import type { Ledger } from './ledger';
import { SerialQueue } from './serialQueue';
import { printable } from '../printable';

export interface FollowOptions {
  conn: Connection;
  /** REST event types to hand on, or null for all. */
  types: string[] | null;
  ledger: Ledger;
  /**
   * Hands one event on (forwards it); events come one at a time, in order. May return a report (the
   * printed line), run once the ledger has recorded the event: a line on screen means it is on disk.
   */
  deliver: (event: GatewayEvent) => Promise<(() => void) | void>;
  out: Output;
}

/**
 * A catch-up again this long after each connection: the subscription has no acknowledgement, so an
 * event written while it was being set up may reach neither it nor the first catch-up.
 */
export const SETTLE_CATCH_UP_MS = 1500;
/** And every so often while connected, a cheap check (one page) that nothing slipped past the socket. */
export const PERIODIC_CATCH_UP_MS = 30_000;
const MAX_BACKOFF_MS = 10_000;

/**
 * Follows the account's events for ever: live over the GraphQL subscription, and after every
 * (re)connection a catch-up that pages back to the last event handed on (listen/catchUp.ts). Every
 * event goes through one serial queue and the ledger, so each is handed on once, catch-up before live.
 * Returns only by throwing: a PgwError when retrying cannot help (bad or revoked key, no permission).
 */
export async function follow(opts: FollowOptions): Promise<never> {
  const { conn, types, ledger, deliver, out } = opts;
  const wanted = types ? new Set(types) : null;
  const matches = (e: GatewayEvent) => wanted === null || wanted.has(e.type);
  const enumTypes = types ? types.map((t) => EVENT_TYPES[t]!) : null;
  const url = graphqlWsUrl(conn.baseUrl);
  let failures = 0;
  let dropped = false;
  for (;;) {
    const socket = await EventSocket.open(conn);
    const queue = new SerialQueue((err) => socket.fail(err));
    const handOn = async (e: GatewayEvent) => {
      if (ledger.has(e.id) || !matches(e)) return;
      const report = await deliver(e);
      ledger.record(e.id);
      report?.();
    };
    const catchUp = async (): Promise<number> => {
      const { events, truncated } = await collectMissed((after) => socket.page(after), ledger, matches);
      if (truncated) out.notice(`more than ${CATCH_UP_LIMITS.maxScan} events since the last one handed on: only the newest are caught up`);
      for (const e of events) await handOn(e);
      return events.length;
    };
    socket.subscribe(enumTypes, (e) => queue.push(() => handOn(e)));
    queue.push(async () => {
      const missed = await catchUp();
      // The first page answered: the connection works. Said after a drop, so that the notice of the
      // drop is never the last word on screen.
      if (dropped) out.notice(`reconnected to ${url}; caught up ${missed} event${missed === 1 ? '' : 's'} missed meanwhile`);
      dropped = false;
      failures = 0;
    });
    const settle = setTimeout(() => queue.push(async () => void (await catchUp())), SETTLE_CATCH_UP_MS);
    const periodic = setInterval(() => queue.push(async () => void (await catchUp())), PERIODIC_CATCH_UP_MS);
    const end = await socket.ended;
    clearTimeout(settle);
    clearInterval(periodic);
    queue.stop();
    await queue.idle();
    if ('fatal' in end) throw end.fatal;
    const wait = end.immediately ? 0 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures++);
    dropped = true;
    out.notice(`${url}: ${printable(end.retry)}; reconnecting${wait ? ` in ${(wait / 1000).toFixed(1)} s` : ''}`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

