import { ApiError } from '../errors';

/**
 * How deep a GraphQL request's JSON may nest, on every transport, with the HTTP body reader's limit and
 * refusal: JSON that reached GraphQL already parsed (GET's `variables`, a WebSocket payload) is checked here
 * before recursive code walks it (10,000 levels overflowed the stack). More: docs/decisions/notes/graphql.md,
 * "Request JSON depth".
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
