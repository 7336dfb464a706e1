import http from 'node:http';

const LIMIT = 256 * 1024;

export interface RawRequest {
  method: string;
  /** Path and query, sent as given. */
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** At most 256 kB of the body; empty for event streams (closed after the headers). */
  text: string;
  /** The body was longer than what `text` holds. */
  truncated: boolean;
}

/**
 * HTTP over node:http rather than fetch: fetch refuses many of the requests a fuzzer sends (latin-1
 * header bytes, duplicate headers, bodies on GET, raw percent sequences). Event streams are closed as
 * soon as their headers arrive.
 */
export function rawRequest(baseUrl: string, req: RawRequest, agent: http.Agent, timeoutMs = 30_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    if (req.body) headers['content-length'] = String(req.body.length);
    let r: http.ClientRequest;
    try {
      r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent });
    } catch (err) {
      reject(err);
      return;
    }
    const timer = setTimeout(() => r.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), truncated: size > LIMIT });
      };
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        done();
        return;
      }
      res.on('data', (c: Buffer) => {
        if (size < LIMIT) chunks.push(c.subarray(0, LIMIT - size));
        size += c.length;
      });
      res.on('end', done);
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    r.end(req.body);
  });
}
