import type { components } from '@pgw/client';
import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { createOutput, paintStatus, type Output } from '../output';
import { printable } from '../printable';

type LogEntry = components['schemas']['LogEntry'];

const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 10_000;
const PAGE = 100;
const OWN_LIMIT = 500;

/**
 * `pgw logs tail`: the requests made with this key, polled (GET /logs has no stream), newest page each
 * time: every second while there is something new, backing off to 10 s while nothing happens. Its own polls are
 * logged too and left out by their request ids.
 */
export async function logsTail(opts: ConnectionFlags & { json?: boolean }): Promise<never> {
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const api = apiClient(conn);
  // The ids of the last page read: what is not among them is new (the page is the newest 100).
  let known = new Set<string>();
  const own = new Set<string>();
  const readFresh = async (): Promise<LogEntry[]> => {
    const { data, response } = await api.GET('/logs', { params: { query: { limit: PAGE } } });
    const requestId = response.headers.get('request-id');
    if (requestId) own.add(requestId);
    const page: LogEntry[] = data.data;
    const fresh = page.filter((e) => !known.has(e.request_id) && !own.has(e.request_id));
    known = new Set(page.map((e) => e.request_id));
    // Own polls are remembered a while (their log line may be written after the answer), then forgotten.
    for (const id of own) if (own.size > OWN_LIMIT) own.delete(id);
    return fresh.reverse();
  };
  await readFresh();
  out.notice(`tailing request logs of this key on ${conn.baseUrl} (Ctrl-C to stop)`);
  let wait = FIRST_WAIT_MS;
  for (;;) {
    await new Promise((r) => setTimeout(r, wait));
    const fresh = await readFresh();
    for (const e of fresh) printEntry(out, e);
    wait = fresh.length > 0 ? FIRST_WAIT_MS : Math.min(MAX_WAIT_MS, wait * 2);
  }
}

function printEntry(out: Output, e: LogEntry): void {
  if (out.json) return out.object(e);
  const when = out.color ? out.paint('dim', printable(e.created_at)) : printable(e.created_at);
  out.line(
    `${when}  ${printable(e.method).padEnd(6)} ${printable(e.path)}  ${paintStatus(out, e.status)}  ${printable(e.latency_ms)} ms${e.error_code ? `  ${printable(e.error_code)}` : ''}  ${printable(e.request_id)}`,
  );
}
