import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { UsageError } from '../errors';
import { createOutput } from '../output';
import { promptLine } from '../prompt';

/**
 * `pgw reset`: POST /sandbox/reset, which deletes the account's payments, events, deliveries, links,
 * checkout sessions and logs and sets its clock back (keys and webhook endpoints stay). Destructive, so
 * it asks first unless `--yes`; anything but `y`/`yes` (or no answer: input closed) resets nothing and
 * exits 2, like any other way of calling pgw that does not do what was asked.
 */
export async function reset(opts: ConnectionFlags & { json?: boolean; yes?: boolean }): Promise<void> {
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  if (!opts.yes) {
    const answer = await promptLine(`Delete every payment, event, delivery, link, checkout session and log of this account on ${conn.baseUrl}? [y/N] `);
    if (!/^y(es)?$/i.test(answer)) throw new UsageError('not confirmed: nothing was reset (pass --yes to skip the question)');
  }
  out.progress('resetting the sandbox');
  const { data } = await apiClient(conn).POST('/sandbox/reset', {});
  if (out.json) return out.object(data);
  const d = data.deleted;
  out.line(
    `Sandbox reset: deleted ${d.payment_intents} payment intents, ${d.refunds} refunds, ${d.events} events, ` +
      `${d.webhook_deliveries} webhook deliveries, ${d.payment_links} payment links, ${d.checkout_sessions} checkout sessions, ` +
      `${d.logs} log entries; the sandbox clock is back at real time. Keys and webhook endpoints are kept.`,
  );
}
