import type { Request } from 'express';
import { ApiError } from '../errors';

/**
 * Reads a JSON request body ourselves rather than through express.json(), so each failure has the
 * contract's own code: 413 payload_too_large past the limit (without buffering more than the limit),
 * 400 invalid_request for a body that is not declared as JSON, 400 invalid_json for broken JSON.
 * Returns undefined for an empty body.
 */
export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.resume();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw ApiError.invalid("Request bodies must be sent with 'Content-Type: application/json'");
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text, rejectProtoKeys);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** `__proto__` and `constructor` are never legitimate field names here; refuse them outright. */
function rejectProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || key === 'constructor') {
    throw ApiError.invalid(`Unknown field '${key}'`);
  }
  return value;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('payload_too_large', `Request body exceeds the maximum of ${maxBytes} bytes`);
}
