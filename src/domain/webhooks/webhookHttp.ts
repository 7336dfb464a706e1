import { injectTraceHeaders, inSpan, tracingOn } from '../../tracing/tracing';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { networkFailure, timedOut } from './attemptFailure';
import { resolveWebhookTarget, TargetRefusedError, type WebhookTargetPolicy } from './targetResolver';

/**
 * One HTTP POST of a webhook: keep-alive agents, the connection pinned to the address that passed the
 * private-network check, no redirects. One deadline covers the whole attempt (no status line by then is
 * status 0), and the promise settles only once the socket is released, so limiting attempts in flight
 * limits open sockets too. More: docs/decisions/notes/webhooks.md, "One attempt's request".
 */
export const ATTEMPT_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Up to 64 connections per endpoint host, all of them kept alive between bursts (idle ones close after
 * 30 s): with 16 kept, every burst above 16 deliveries reconnected, and bench:rail at 300 payments/s
 * opened about 1,300 connections to its one receiver instead of 64.
 */
const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, timeout: 30_000 };

/** One gateway's keep-alive agents (its delivery engine's): its stop destroys its sockets, in flight or idle. */
export interface WebhookAgents {
  http: http.Agent;
  https: https.Agent;
}

export function createWebhookAgents(): WebhookAgents {
  return { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
}

export interface AttemptOutcome {
  /** HTTP status, or 0 when there was no response (refused, reset, timeout, blocked address). */
  status: number;
  /** Time to the status line (or to the failure). */
  ms: number;
  /** Why there was no response, in words (attemptFailure.ts): stored as the delivery's `last_error`. */
  error?: string;
}

export interface PostOptions {
  policy: WebhookTargetPolicy;
  agents: WebhookAgents;
  timeoutMs?: number;
  /**
   * With tracing on: the span the event was emitted in (its delivery's `trace_parent`). The attempt is
   * a CLIENT span, its child, and the request carries that attempt's own `traceparent`, so that the
   * receiver's tracing continues the trace of the request that caused the event.
   */
  traceParent?: string;
}

export function postWebhook(rawUrl: string, body: string, headers: Record<string, string>, opts: PostOptions): Promise<AttemptOutcome> {
  if (!tracingOn()) return post(rawUrl, body, headers, opts);
  return inSpan('webhook attempt', { kind: 'client', parent: opts.traceParent, attributes: { 'http.request.method': 'POST' } }, async (span) => {
    const traced = { ...headers };
    injectTraceHeaders(traced);
    const outcome = await post(rawUrl, body, traced, opts);
    span?.setAttribute('http.response.status_code', outcome.status);
    if (outcome.status < 200 || outcome.status >= 300) span?.setStatus({ code: 2, message: outcome.error ?? `HTTP ${outcome.status}` });
    return outcome;
  });
}

async function post(rawUrl: string, body: string, headers: Record<string, string>, opts: PostOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  let target;
  try {
    // DNS gets what is left of the same deadline (and never more than its own limit).
    target = await resolveWebhookTarget(new URL(rawUrl), opts.policy, timeoutMs);
  } catch (err) {
    return { status: 0, ms: elapsed(), error: refusedTarget(err) };
  }
  const remainingMs = Math.max(1, timeoutMs - elapsed());
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const isHttps = url.protocol === 'https:';

  return new Promise<AttemptOutcome>((resolve) => {
    let outcome: AttemptOutcome | null = null;
    let released = false;
    // Settles once: with the status as soon as it is known, but only after the socket is released.
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      resolve(outcome ?? { status: 0, ms: elapsed(), error: 'connection closed without a response' });
    };
    const fail = (error: string) => {
      outcome ??= { status: 0, ms: elapsed(), error };
      release();
    };
    const req = (isHttps ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (isHttps ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: isHttps ? opts.agents.https : opts.agents.http,
        lookup: pinned,
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body).toString() },
      },
      (res) => {
        outcome = { status: res.statusCode ?? 0, ms: elapsed() };
        // Read (bounded, not kept) to the end so the keep-alive connection can be reused.
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_RESPONSE_BYTES) {
            res.destroy();
            release();
          }
        });
        res.on('end', release);
        res.on('close', release);
        res.on('error', () => release());
      },
    );
    // The whole attempt's deadline: destroying the request destroys its socket (a socket that is
    // destroyed is never handed back to the agent's free pool).
    const timer = setTimeout(() => {
      req.destroy();
      fail(timedOut(timeoutMs));
    }, remainingMs);
    req.on('error', (err) => fail(networkFailure(err)));
    req.on('close', () => fail('connection closed'));
    req.end(body);
  });
}

/**
 * A name that does not resolve (in time) is a DNS failure; one that resolves somewhere private is
 * refused by policy, and the words say which address kind (never the resolved address itself).
 */
function refusedTarget(err: unknown): string {
  if (!(err instanceof TargetRefusedError)) return 'connection failed';
  return err.unresolved ? 'DNS lookup failed' : `address not allowed: ${err.message}`;
}

/** Closes a gateway's keep-alive connections (webhookBackground.ts, at its stop). */
export function closeWebhookAgents(agents: WebhookAgents): void {
  agents.http.destroy();
  agents.https.destroy();
}
