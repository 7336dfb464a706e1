import os from 'node:os';

/**
 * This machine's first non-loopback IPv4 address, or undefined. A gateway listening on 0.0.0.0 and
 * reached through it sees that address as its peer: how a test makes a real non-loopback client (GET
 * /metrics without METRICS_TOKEN refuses those). Tests that need one skip loudly without it.
 */
export function nonLoopbackIPv4(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

/** The same gateway as `baseUrl`, reached through `address`. */
export function viaAddress(baseUrl: string, address: string): string {
  return `http://${address}:${new URL(baseUrl).port}`;
}
