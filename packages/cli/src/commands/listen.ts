import { accountIdOf, apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { UsageError } from '../errors';
import { parseEventTypes } from '../eventTypes';
import type { GatewayEvent } from '../eventSocket';
import { parseHttpUrl } from '../httpUrl';
import { serveResends, type ResendAnswer } from '../listen/control';
import { follow } from '../listen/follow';
import {
  delivered,
  FORWARD_RETRY_POLICY,
  forwardEvent,
  forwardWithRetries,
  MAX_FORWARD_RETRIES,
  type ForwardResult,
  type ForwardRetryPolicy,
} from '../listen/forwarder';
import { Ledger } from '../listen/ledger';
import { parseChaos } from '../listen/chaos';
import { chaosDeliver, type CopyKind } from '../listen/chaosForward';
import { listenFiles, loadOrCreateSecret } from '../listen/listenFiles';
import { createOutput, paintStatus, type Output } from '../output';
import { baselineEvents } from './baseline';
import { printable } from '../printable';

export interface ListenOptions extends ConnectionFlags {
  forwardTo: string;
  events?: string;
  retries?: string;
  chaos?: string;
  json?: boolean;
}

/**
 * `pgw listen --forward-to <url>`: the first line carries the local signing secret; then one line per
 * forwarded event, until interrupted. Reconnects and catches up by itself (listen/follow.ts). A forward
 * without a 2xx is retried (`--retries`, with backoff) before the next event goes; an event is marked
 * done only after that, so a listener stopped meanwhile sends it again on restart (at least once).
 * `pgw resend <event>` reaches it through a local socket (listen/control.ts).
 */
export async function listen(opts: ListenOptions): Promise<never> {
  const forwardTo = parseHttpUrl(opts.forwardTo, '--forward-to').href;
  const types = parseEventTypes(opts.events);
  const policy = parseRetries(opts.retries);
  const chaos = parseChaos(opts.chaos);
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
  else out.line(`Ready: forwarding ${what} of ${printable(accountId)} to ${forwardTo}; signing secret ${out.paint('bold', secret)}`);
  // Said, with its seed, so that a run can be repeated with the same choices.
  if (chaos) out.notice(`chaos on: ${opts.chaos}; seed ${chaos.seed}`);

  const send = async (event: GatewayEvent, resent: boolean) => {
    const { result, attempts } = await forwardWithRetries(
      () => forwardEvent(event, forwardTo, secret),
      policy,
      (failed, attempt, wait) => printDelivery(out, event, failed, { attempt, resent, retryInMs: wait, retries: policy.retries }),
    );
    return { result, attempts };
  };
  const note = await serveResends(files.socket, async (event): Promise<ResendAnswer> => {
    const { result, attempts } = await send(event, true);
    printDelivery(out, event, result, { attempt: attempts, resent: true, retries: policy.retries });
    return { forward_to: forwardTo, status: result.status, latency_ms: result.ms, attempts, ...(result.error ? { error: result.error } : {}) };
  }).catch((err: Error) => `pgw resend cannot reach this listener: ${err.message}`);
  if (note) out.notice(note);

  const forward = async (event: GatewayEvent) => {
    const { result, attempts } = await send(event, false);
    return () => printDelivery(out, event, result, { attempt: attempts, resent: false, retries: policy.retries });
  };
  const withChaos = chaos && chaosDeliver(chaos, forwardTo, secret, (event, kind, r) => printChaosCopy(out, event, kind, r));
  return follow({ conn, types, ledger, out, deliver: (event) => (withChaos ? withChaos(event, () => forward(event)) : forward(event)) });
}

function parseRetries(raw: string | undefined): ForwardRetryPolicy {
  if (raw === undefined) return FORWARD_RETRY_POLICY;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > MAX_FORWARD_RETRIES) {
    throw new UsageError(`--retries must be a whole number from 0 to ${MAX_FORWARD_RETRIES}, got '${raw}'`);
  }
  return { ...FORWARD_RETRY_POLICY, retries: Number(raw) };
}

/** A chaos copy's line; a forged copy answered with a 2xx is the receiver's bug, said on stderr too. */
function printChaosCopy(out: Output, event: GatewayEvent, kind: CopyKind, r: ForwardResult): void {
  const accepted = delivered(r);
  if (out.json) out.object({ object: 'pgw.chaos', event_id: event.id, type: event.type, chaos: kind, status: r.status, latency_ms: r.ms, ...(r.error ? { error: r.error } : {}) });
  else out.line(`${new Date().toISOString()}  ${printable(event.type).padEnd(27)} ${printable(event.id)}  ${r.error === undefined ? paintStatus(out, r.status) : printable(r.error)}  (chaos: ${kind})`);
  if (kind !== 'duplicate' && accepted) out.notice(`the receiver accepted a forged copy (${kind}) of ${printable(event.id)} with HTTP ${r.status}: it must reject it`);
}

interface AttemptInfo {
  attempt: number;
  retries: number;
  resent: boolean;
  /** Set when this failed attempt will be retried after that long. */
  retryInMs?: number;
}

/**
 * One line per attempt that failed and will be retried, and one for the outcome: delivered, or given up
 * after the last retry (then also a notice on stderr, so that a failure is not lost in the stream).
 */
function printDelivery(out: Output, event: GatewayEvent, r: ForwardResult, a: AttemptInfo): void {
  const at = new Date().toISOString();
  const gaveUp = a.retryInMs === undefined && !delivered(r);
  if (out.json) {
    out.object({
      object: 'pgw.delivery',
      at,
      event_id: event.id,
      type: event.type,
      status: r.status,
      latency_ms: r.ms,
      attempt: a.attempt,
      ...(r.error ? { error: r.error } : {}),
      ...(a.resent ? { resent: true } : {}),
      ...(a.retryInMs !== undefined ? { retry_in_ms: a.retryInMs } : {}),
      ...(gaveUp ? { gave_up: true } : {}),
    });
  } else {
    const status = r.error ? `${paintStatus(out, 0)} ${printable(r.error)}` : paintStatus(out, r.status);
    const extra = [
      a.resent ? 'resent' : '',
      a.retryInMs !== undefined ? `attempt ${a.attempt} of ${a.retries + 1}, retrying in ${(a.retryInMs / 1000).toFixed(1)} s` : '',
      a.retryInMs === undefined && a.attempt > 1 ? `attempt ${a.attempt}` : '',
    ].filter(Boolean);
    out.line(`${out.color ? out.paint('dim', printable(at.slice(11, 19))) : printable(at)}  ${printable(event.type).padEnd(27)} ${printable(event.id)}  ${status}  ${r.ms} ms${extra.length ? `  (${extra.join(', ')})` : ''}`);
  }
  if (gaveUp) out.notice(`gave up forwarding ${printable(event.id)} after ${a.attempt} attempt${a.attempt === 1 ? '' : 's'}: ${printable(r.error ?? `HTTP ${r.status}`)}`);
}
