import { isIP } from 'node:net';

/**
 * Which IP addresses a webhook may be sent to. Without this, a sandbox user could point an endpoint
 * at the gateway's own network (databases, cloud metadata at 169.254.169.254) and read the answers
 * through GET /deliveries. The check applies to the addresses a host name resolves to, not to the
 * name, and the delivery connects to the address that was checked (see targetResolver.ts).
 */
export type AddressClass =
  | 'public'
  | 'unspecified' // 0.0.0.0/8, ::
  | 'loopback' // 127/8, ::1
  | 'private' // 10/8, 172.16/12, 192.168/16; ::ffff:0:0/96, 64:ff9b:1::/48, 2001::/32 (translators, tunnels)
  | 'shared' // 100.64/10 (carrier-grade NAT)
  | 'link_local' // 169.254/16, fe80::/10
  | 'unique_local' // fc00::/7
  | 'reserved' // multicast, broadcast, 240/4, benchmarking, documentation, site-local
  | 'invalid';

type Range4 = [base: number, bits: number, cls: AddressClass];

const V4_RANGES: readonly Range4[] = [
  [ip4(0, 0, 0, 0), 8, 'unspecified'],
  [ip4(10, 0, 0, 0), 8, 'private'],
  [ip4(100, 64, 0, 0), 10, 'shared'],
  [ip4(127, 0, 0, 0), 8, 'loopback'],
  [ip4(169, 254, 0, 0), 16, 'link_local'],
  [ip4(172, 16, 0, 0), 12, 'private'],
  [ip4(192, 0, 0, 0), 24, 'reserved'], // IETF protocol assignments
  [ip4(192, 0, 2, 0), 24, 'reserved'], // TEST-NET-1
  [ip4(192, 88, 99, 0), 24, 'reserved'], // 6to4 relay anycast
  [ip4(192, 168, 0, 0), 16, 'private'],
  [ip4(198, 18, 0, 0), 15, 'reserved'], // benchmarking
  [ip4(198, 51, 100, 0), 24, 'reserved'], // TEST-NET-2
  [ip4(203, 0, 113, 0), 24, 'reserved'], // TEST-NET-3
  [ip4(224, 0, 0, 0), 4, 'reserved'], // multicast
  [ip4(240, 0, 0, 0), 4, 'reserved'], // future use + broadcast
];

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

function classifyIPv4Number(n: number): AddressClass {
  for (const [base, bits, cls] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if (((n & mask) >>> 0) === base) return cls;
  }
  return 'public';
}

/** Eight 16-bit groups, or undefined when not a valid IPv6 literal. Accepts a dotted IPv4 tail. */
function parseIPv6(text: string): number[] | undefined {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [v4 >>> 16, v4 & 0xffff];
    // Keep a '::' that precedes the dotted part; drop a single separating ':'.
    s = s.slice(0, lastColon + 1);
    if (!s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const toGroups = (h: string | undefined): number[] | undefined => {
    if (!h) return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  if (!head || !rest) return undefined;
  const given = head.length + rest.length + tail.length;
  if (halves.length === 1 && given !== 8) return undefined;
  if (halves.length === 2 && given > 7) return undefined;
  return [...head, ...new Array(8 - given).fill(0), ...rest, ...tail];
}

function classifyIPv6Groups(g: number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = ((g6 << 16) | g7) >>> 0;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0 && g6 === 0 && g7 === 0) return 'unspecified';
    if (g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
    // ::ffff:a.b.c.d (IPv4-mapped) and the deprecated ::a.b.c.d (IPv4-compatible) reach IPv4 hosts.
    if (g5 === 0xffff || g5 === 0) return classifyIPv4Number(embedded);
  }
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT, RFC 2765) goes through a translator of the local network,
  // whatever IPv4 address it embeds.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return 'private';
  // 64:ff9b:1::/48 (local-use NAT64, RFC 8215): the operator's own translator, and the IPv4 address can
  // sit at any of several offsets, so the whole prefix is private.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0x0001) return 'private';
  // 2001::/32 (Teredo): a tunnel whose server and client IPv4 addresses (the client's obfuscated) are
  // embedded; the far end is whatever the relay decides, so never a checked public destination.
  if (g0 === 0x2001 && g1 === 0x0000) return 'private';
  // 64:ff9b::/96 (NAT64) also embeds an IPv4 destination.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIPv4Number(embedded);
  // 2002::/16 (6to4) embeds the IPv4 gateway in groups 1-2.
  if (g0 === 0x2002) return classifyIPv4Number(((g1 << 16) | g2) >>> 0);
  if ((g0 & 0xfe00) === 0xfc00) return 'unique_local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link_local';
  if ((g0 & 0xffc0) === 0xfec0) return 'reserved'; // site-local (deprecated)
  if ((g0 & 0xff00) === 0xff00) return 'reserved'; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved'; // documentation
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // discard-only
  return 'public';
}

/** Classifies an IPv4 or IPv6 literal (brackets and zone ids allowed). */
export function classifyAddress(address: string): AddressClass {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return classifyIPv4Number(v4);
  if (isIP(text.split('%')[0] ?? '') !== 6) return 'invalid';
  const groups = parseIPv6(text);
  return groups ? classifyIPv6Groups(groups) : 'invalid';
}

/** True when a webhook must not be sent to this address (anything but a public unicast address). */
export function isForbiddenAddress(address: string): boolean {
  return classifyAddress(address) !== 'public';
}
