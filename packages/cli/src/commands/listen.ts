import { accountIdOf, apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { parseEventTypes } from '../eventTypes';
import type { GatewayEvent } from '../eventSocket';
import { parseHttpUrl } from '../httpUrl';
import { follow } from '../listen/follow';
import { forwardEvent, type ForwardResult } from '../listen/forwarder';
import { Ledger } from '../listen/ledger';
import { listenFiles, loadOrCreateSecret } from '../listen/listenFiles';
import { createOutput, paintStatus, type Output } from '../output';
import { baselineEvents } from './baseline';

export interface ListenOptions extends ConnectionFlags {
  forwardTo: string;
  events?: string;
  json?: boolean;
}

/**
 * `pgw listen --forward-to <url>`: the first line carries the local signing secret; then one line per
 * forwarded event, until interrupted. Reconnects and catches up by itself (listen/follow.ts).
 */
export async function listen(opts: ListenOptions): Promise<never> {
  const forwardTo = parseHttpUrl(opts.forwardTo, '--forward-to').href;
  const types = parseEventTypes(opts.events);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const api = apiClient(conn);
  const accountId = await accountIdOf(api, conn);
  const files = listenFiles(conn.baseUrl, accountId, forwardTo);
  const secret = loadOrCreateSecret(files.secret);
  const ledger = new Ledger(files.ledger);
  // First run for this account and URL: what exists now is history, not to be forwarded.
  if (!ledger.initialized) ledger.baseline(await baselineEvents(api));
  const what = types ? types.join(', ') : 'all events';
  if (out.json) out.object({ object: 'pgw.listen', secret, forward_to: forwardTo, events: types ?? ['*'], account: accountId });
  else out.line(`Ready: forwarding ${what} of ${accountId} to ${forwardTo}; signing secret ${out.paint('bold', secret)}`);
  return follow({
    conn,
    types,
    ledger,
    out,
    deliver: async (event) => {
      const result = await forwardEvent(event, forwardTo, secret);
      return () => printDelivery(out, event, result);
    },
  });
}

function printDelivery(out: Output, event: GatewayEvent, r: ForwardResult): void {
  const at = new Date().toISOString();
  if (out.json) {
    out.object({ object: 'pgw.delivery', at, event_id: event.id, type: event.type, status: r.status, latency_ms: r.ms, ...(r.error ? { error: r.error } : {}) });
    return;
  }
  const status = r.error ? `${paintStatus(out, 0)} ${r.error}` : paintStatus(out, r.status);
  out.line(`${out.color ? out.paint('dim', at.slice(11, 19)) : at}  ${event.type.padEnd(27)} ${event.id}  ${status}  ${r.ms} ms`);
}
