import { ApiError } from '../errors';

/**
 * How deep a GraphQL request's JSON may nest (arrays and objects inside one another), over every
 * transport: the same limit, and the same refusal, as the HTTP body reader's (src/http/body.ts, which
 * checks a POST's text before parsing it). A request whose JSON reached GraphQL some other way — the
 * `variables` and `extensions` of `GET /graphql`, a WebSocket `subscribe` payload that graphql-ws has
 * already parsed — is checked here, before any recursive code (graphql-js's variable coercion, the
 * JSON scalar, the request log) walks it: 10,000 levels of `{"a":…}` fit in a 64 KiB message and
 * overflowed the stack over WebSocket. Their size is bounded before they are parsed: by the body limit
 * (POST), the URL's (GET), and the WebSocket message limit (MAX_BODY_BYTES, a larger message closes
 * the socket with 1009).
 */
export const MAX_REQUEST_JSON_DEPTH = 64;

/** 400 `invalid_request` when `value` nests deeper than MAX_REQUEST_JSON_DEPTH; a loop, never recursion. */
export function checkRequestJsonDepth(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const pending: Array<{ value: object; depth: number }> = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.depth > MAX_REQUEST_JSON_DEPTH) {
      throw ApiError.invalid(`Request body is nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);
    }
    for (const child of Object.values(next.value)) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child as object, depth: next.depth + 1 });
    }
  }
}
