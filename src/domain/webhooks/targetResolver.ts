import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config, WebhookOutgoingLimits } from '../../config';
import { ApiError } from '../../errors';
import { classifyAddress } from './addressPolicy';
import { monotonicMs } from '../../platform/clock/machineClock';

/**
 * Where one gateway's webhooks may go and how their names resolve. src/server.ts builds it from the
 * gateway's Config and hands it to what creates endpoints and delivers (no process-wide setting, so two
 * gateways in one process each keep their own).
 */
export interface WebhookTargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: deliver to loopback/private addresses (local work only). */
  allowPrivateNetworks: boolean;
  /** Name servers for webhook hosts (`host:port`); absent = the system's (/etc/resolv.conf). Tests point it at a local one. */
  dnsServers?: readonly string[];
  /** The caps on what is sent (outgoingBudget.ts) and the recovery cooldown; absent: the defaults. */
  outgoing?: WebhookOutgoingLimits;
}

export const DEFAULT_OUTGOING: WebhookOutgoingLimits = { perAccountPerMinute: 6_000, perHostPerMinute: 12_000, recoverCooldownMs: 60_000 };

export function webhookTargetPolicy(config: Pick<Config, 'webhookAllowPrivateNetworks'> & Partial<Pick<Config, 'webhookOutgoing'>>): WebhookTargetPolicy {
  return { allowPrivateNetworks: config.webhookAllowPrivateNetworks, outgoing: config.webhookOutgoing ?? DEFAULT_OUTGOING };
}

/**
 * The host a URL's requests count against (outgoingBudget.ts): its host name as resolution reads it,
 * lower case, without IPv6 brackets or a final dot (the URL parser has already made IP literals
 * canonical, so `0x7f.1` and `127.0.0.1` are one host). Not the resolved address: that is known only
 * inside the attempt, after the budget was taken; names that share an address count apart, each within
 * its account's cap.
 */
export function targetHost(rawUrl: string): string {
  try {
    return bareHost(new URL(rawUrl)).toLowerCase().replace(/\.$/, '');
  } catch {
    return rawUrl;
  }
}

/**
 * Turns a webhook URL into the one address a delivery will connect to. The address is checked
 * against the private-network policy AFTER DNS resolution and the connection is pinned to it, so a
 * name that resolves to a public address at creation and to 127.0.0.1 a second later (DNS
 * rebinding) is still refused.
 */
export interface ResolvedTarget {
  url: URL;
  /** Address to connect to. */
  address: string;
  family: 4 | 6;
}

export class TargetRefusedError extends Error {
  /** True when the name simply did not resolve (as opposed to resolving somewhere forbidden). */
  readonly unresolved: boolean;

  constructor(message: string, unresolved = false) {
    super(message);
    this.unresolved = unresolved;
    this.name = 'TargetRefusedError';
  }
}

/** Parses and checks the form of a webhook URL (no network): absolute http(s), a host, no fragment. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw ApiError.invalid('url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ApiError.invalid('url must use http or https');
  if (!url.hostname) throw ApiError.invalid('url must have a host');
  if (url.hash) throw ApiError.invalid('url must not contain a fragment');
  return url;
}

/** Hostname without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

// A short cache of checked resolutions keeps DNS off the hot path of a burst of deliveries. Entries
// only ever hold addresses that passed the policy, and the connection uses the cached address itself.
const CACHE_MS = 10_000;
// eslint-disable-next-line no-restricted-syntax -- keyed by policy and name servers: each gateway's settings get their own entries
const cache = new Map<string, { at: number; address: string; family: 4 | 6 }>();

/** The longest a resolution may take (both families, in parallel); the attempt's deadline may cut it shorter. */
export const DNS_TIMEOUT_MS = 2_000;

/**
 * Names resolved without DNS. `localhost` and `*.localhost` are loopback by definition (RFC 6761), so
 * they are answered here rather than asked of a DNS server (which may not know them): refused unless
 * private networks are allowed, as every loopback address is.
 */
function fixedAddresses(host: string): Array<{ address: string; family: 4 | 6 }> | null {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
  return null;
}

/**
 * A and AAAA records through c-ares (`dns.promises.Resolver`), not `dns.lookup`: getaddrinfo runs on
 * libuv's thread pool, which the journal's fdatasync and other file work share, and it has no timeout,
 * so a slow name server could have stalled the database. c-ares does its own non-blocking I/O. It asks
 * DNS only: a name known only from /etc/hosts does not resolve (use its IP literal, with
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS if it is a private one). IPv4 addresses first, then IPv6.
 */
async function resolveBoth(host: string, timeoutMs: number, dnsServers: readonly string[] | undefined): Promise<Array<{ address: string; family: 4 | 6 }>> {
  const fixed = fixedAddresses(host);
  if (fixed) return fixed;
  const resolver = new Resolver({ timeout: Math.max(1, Math.min(timeoutMs, DNS_TIMEOUT_MS)), tries: 1 });
  if (dnsServers) resolver.setServers(dnsServers);
  // The resolver's own timeout is per query and server: the overall bound comes from this timer.
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.min(timeoutMs, DNS_TIMEOUT_MS));
  });
  const family = (records: Promise<string[]>, fam: 4 | 6) =>
    records.then(
      (list) => list.map((address) => ({ address, family: fam })),
      () => [] as Array<{ address: string; family: 4 | 6 }>,
    );
  try {
    const answer = await Promise.race([Promise.all([family(resolver.resolve4(host), 4), family(resolver.resolve6(host), 6)]), expired]);
    if (answer === 'timeout') {
      resolver.cancel();
      throw new TargetRefusedError(`${host} did not resolve within ${Math.min(timeoutMs, DNS_TIMEOUT_MS)} ms`, true);
    }
    return answer.flat();
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves `url` and applies the policy. Throws TargetRefusedError when any resolved address is
 * private/loopback/link-local/reserved (unless allowed) or the name does not resolve (in time).
 */
export async function resolveWebhookTarget(url: URL, policy: WebhookTargetPolicy, timeoutMs = DNS_TIMEOUT_MS): Promise<ResolvedTarget> {
  const { allowPrivateNetworks, dnsServers } = policy;
  const host = bareHost(url);
  const literal = isIP(host);
  if (literal) {
    if (!allowPrivateNetworks && classifyAddress(host) !== 'public') {
      throw new TargetRefusedError(`${host} is a ${classifyAddress(host).replace('_', '-')} address`);
    }
    return { url, address: host, family: literal === 6 ? 6 : 4 };
  }

  // Per policy and name servers: a gateway with other settings in the same process resolves for itself.
  const key = `${allowPrivateNetworks ? 'p' : 's'}:${dnsServers?.join(',') ?? ''}:${host.toLowerCase()}`;
  const hit = cache.get(key);
  if (hit && monotonicMs() - hit.at < CACHE_MS) return { url, address: hit.address, family: hit.family };

  const addresses = await resolveBoth(host, timeoutMs, dnsServers);
  if (addresses.length === 0) throw new TargetRefusedError(`${host} does not resolve`, true);
  if (!allowPrivateNetworks) {
    // Every address must be public: a name with one public and one private record is refused, or
    // the connection could be steered to the private one.
    const bad = addresses.find((a) => classifyAddress(a.address) !== 'public');
    if (bad) throw new TargetRefusedError(`${host} resolves to a ${classifyAddress(bad.address).replace('_', '-')} address`);
  }
  const first = addresses[0]!;
  if (cache.size > 10_000) cache.clear();
  // Its age on the monotonic clock: a wall-clock step neither keeps nor drops it.
  cache.set(key, { at: monotonicMs(), address: first.address, family: first.family });
  return { url, address: first.address, family: first.family };
}

/**
 * Creation-time check: the URL's form, then (unless private networks are allowed) its resolution,
 * as a 400 invalid_request. A name that does not resolve yet is accepted: it is not a private
 * address, and every delivery resolves and checks again.
 */
export async function assertAcceptableWebhookUrl(raw: string, policy: WebhookTargetPolicy): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (policy.allowPrivateNetworks) return url;
  try {
    await resolveWebhookTarget(url, policy);
  } catch (err) {
    if (err instanceof TargetRefusedError && !err.unresolved) {
      throw ApiError.invalid(`url is not allowed: ${err.message}. Webhook targets must be public addresses (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true for local work)`);
    }
    if (!(err instanceof TargetRefusedError)) throw err;
  }
  return url;
}
