import type { Request } from 'express';
import { ApiError } from '../errors';
import { keepRequestBody } from './loggedBodies';

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
  const { chunks, size } = await readChunks(req, maxBytes);
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw ApiError.invalid("Request bodies must be sent with 'Content-Type: application/json'");
  }
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8');
  // As received, broken JSON included: what the log shows of this request.
  keepRequestBody(req.res, text);
  if (nestedDeeperThan(text, MAX_DEPTH)) {
    throw ApiError.invalid(`Request body is nested deeper than ${MAX_DEPTH} levels`);
  }
  try {
    // A reviver makes JSON.parse several times slower; it only matters when a forbidden key can be
    // in the text, spelled out or hidden behind a \u escape.
    const risky = text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
    return risky ? JSON.parse(text, rejectProtoKeys) : JSON.parse(text);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The body's chunks, refused past `maxBytes` without buffering more. Stream events rather than
 * `for await`: the async iterator costs a few promises and objects per chunk on every request.
 */
function readChunks(req: Request, maxBytes: number): Promise<{ chunks: Buffer[]; size: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    if (req.readableEnded) {
      resolve({ chunks, size });
      return;
    }
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ chunks, size });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    // The client went away before the end of its body (Node reports that as 'error' too, or not).
    const onClose = () => onError(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** No request of the contract nests anywhere near this deep; deeper bodies would overflow recursive code. */
const MAX_DEPTH = 64;

/** Whether the JSON text opens more than `limit` arrays/objects inside one another (strings skipped). */
function nestedDeeperThan(text: string, limit: number): boolean {
  // Exceeding the limit takes more than 2 * limit characters: short bodies need no scan.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
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
