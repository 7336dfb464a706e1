import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveWebhookTarget, TargetRefusedError } from './targetResolver';

/**
 * One HTTP POST of a webhook. Keep-alive agents reuse connections to busy receivers; the connection
 * goes to the address that passed the private-network check (pinned through `lookup`, while the Host
 * header and TLS name stay the URL's); redirects are not followed; no answer within the timeout is
 * status 0.
 */
export const ATTEMPT_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 30_000 };
const httpAgent = new http.Agent(agentOptions);
const httpsAgent = new https.Agent(agentOptions);

export interface AttemptOutcome {
  /** HTTP status, or 0 when there was no response (refused, reset, timeout, blocked address). */
  status: number;
  ms: number;
  /** Why there was no response (diagnostics; never returned by the API). */
  error?: string;
}

export async function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  opts: { allowPrivateNetworks: boolean; timeoutMs?: number },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target;
  try {
    target = await resolveWebhookTarget(new URL(rawUrl), opts.allowPrivateNetworks);
  } catch (err) {
    return { status: 0, ms: elapsed(), error: err instanceof TargetRefusedError ? err.message : String(err) };
  }
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const isHttps = url.protocol === 'https:';
  const timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;

  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = (isHttps ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (isHttps ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent: isHttps ? httpsAgent : httpAgent,
        lookup: pinned,
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        headers: { ...headers, 'Content-Length': Buffer.byteLength(body).toString() },
      },
      (res) => {
        finish({ status: res.statusCode ?? 0, ms: elapsed() });
        // Drain (bounded) so the keep-alive connection can be reused; the answer's body is not kept.
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on('error', () => undefined);
      },
    );
    const timer = setTimeout(() => {
      finish({ status: 0, ms: elapsed(), error: `no response within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err) => finish({ status: 0, ms: elapsed(), error: err.message }));
    req.end(body);
  });
}

/** Closes idle keep-alive connections (shutdown). */
export function closeWebhookAgents(): void {
  httpAgent.destroy();
  httpsAgent.destroy();
}
