import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { parseEventTypes } from '../eventTypes';
import type { GatewayEvent } from '../eventSocket';
import { follow } from '../listen/follow';
import { Ledger } from '../listen/ledger';
import { createOutput, type Output } from '../output';
import { baselineEvents } from './baseline';
import { printable } from '../printable';

/**
 * `pgw events tail`: the account's events as they happen, over the GraphQL subscription, with the same
 * reconnect and catch-up as `listen` (in memory only: a new tail starts from now).
 */
export async function eventsTail(opts: ConnectionFlags & { events?: string; json?: boolean }): Promise<never> {
  const types = parseEventTypes(opts.events);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const ledger = new Ledger(null);
  ledger.baseline(await baselineEvents(apiClient(conn)));
  out.notice(`tailing ${types ? types.join(', ') : 'all events'} on ${conn.baseUrl} (Ctrl-C to stop)`);
  return follow({ conn, types, ledger, out, deliver: async (event) => printEvent(out, event) });
}

function printEvent(out: Output, event: GatewayEvent): void {
  if (out.json) return out.object(event);
  const data = event.data as { id?: string; status?: string };
  const about = printable([data.id, data.status].filter(Boolean).join(' '));
  const created = printable(event.created_at);
  out.line(`${out.color ? out.paint('dim', created) : created}  ${out.paint('cyan', printable(event.type).padEnd(27))} ${printable(event.id)}  ${about}`);
}
