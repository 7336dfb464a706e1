import http from 'node:http';
import { parseBody } from './api';

/**
 * A lean JSON request over node:http with a keep-alive agent, for load generators. Global fetch
 * (undici) spends about twice the CPU per request, and a load generator shares this 2-core machine with
 * the gateway it measures: every millisecond it spends is one the gateway does not get.
 */
export function leanJson<T = any>(agent: http.Agent, url: URL, method: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; body: T }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parseBody(Buffer.concat(chunks).toString('utf8')) as T }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
