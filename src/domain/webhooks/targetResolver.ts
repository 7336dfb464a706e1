import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ApiError } from '../../errors';
import { classifyAddress } from './addressPolicy';

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
const cache = new Map<string, { at: number; address: string; family: 4 | 6 }>();

/**
 * Resolves `url` and applies the policy. Throws TargetRefusedError when any resolved address is
 * private/loopback/link-local/reserved (unless allowed) or the name does not resolve.
 */
export async function resolveWebhookTarget(url: URL, allowPrivateNetworks: boolean): Promise<ResolvedTarget> {
  const host = bareHost(url);
  const literal = isIP(host);
  if (literal) {
    if (!allowPrivateNetworks && classifyAddress(host) !== 'public') {
      throw new TargetRefusedError(`${host} is a ${classifyAddress(host).replace('_', '-')} address`);
    }
    return { url, address: host, family: literal === 6 ? 6 : 4 };
  }

  const key = `${allowPrivateNetworks ? 'p' : 's'}:${host.toLowerCase()}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return { url, address: hit.address, family: hit.family };

  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new TargetRefusedError(`${host} does not resolve`, true);
  }
  if (addresses.length === 0) throw new TargetRefusedError(`${host} does not resolve`, true);
  if (!allowPrivateNetworks) {
    // Every address must be public: a name with one public and one private record is refused, or
    // the connection could be steered to the private one.
    const bad = addresses.find((a) => classifyAddress(a.address) !== 'public');
    if (bad) throw new TargetRefusedError(`${host} resolves to a ${classifyAddress(bad.address).replace('_', '-')} address`);
  }
  const first = addresses[0]!;
  const family: 4 | 6 = first.family === 6 ? 6 : 4;
  if (cache.size > 10_000) cache.clear();
  cache.set(key, { at: Date.now(), address: first.address, family });
  return { url, address: first.address, family };
}

/**
 * Creation-time check: the URL's form, then (unless private networks are allowed) its resolution,
 * as a 400 invalid_request. A name that does not resolve yet is accepted: it is not a private
 * address, and every delivery resolves and checks again.
 */
export async function assertAcceptableWebhookUrl(raw: string, allowPrivateNetworks: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (allowPrivateNetworks) return url;
  try {
    await resolveWebhookTarget(url, false);
  } catch (err) {
    if (err instanceof TargetRefusedError && !err.unresolved) {
      throw ApiError.invalid(`url is not allowed: ${err.message}. Webhook targets must be public addresses (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true for local work)`);
    }
    if (!(err instanceof TargetRefusedError)) throw err;
  }
  return url;
}
