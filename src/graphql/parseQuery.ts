import { MAX_DOCUMENT_TOKENS } from '../domain/graphqlDocuments/manifest';
import { ApiError } from '../errors';
import { parseDocument, parsedDocument } from './documentCache';
import type { DocumentNode } from './graphqljs';

/**
 * Brackets (`{`, `(`, `[`) one document may nest. The depth limit (limits.ts: 8 fields; GraphiQL's
 * introspection nests about 20 brackets) is checked on the parsed document; this one keeps a document
 * nested thousands deep from reaching graphql-js's recursive parser at all.
 */
export const MAX_NESTING = 64;
/**
 * Tokens graphql-js reads from an authenticated caller's document before it gives up (a 64 KiB body
 * holds up to ~32,000). Parsing is the part of a refusal no cache can skip the first time a text is
 * seen, and it costs about 1 µs per token: 5,000 keeps a new refused document to a few ms of CPU. The
 * dashboard's largest operation has 235 tokens, GraphiQL's introspection query ~700.
 */
export const MAX_TOKENS = MAX_DOCUMENT_TOKENS;
/**
 * Tokens of a keyless request's document (its public calls: ten aliased createSandboxAccount calls with
 * their selections are some 200): parsing stops there, so that a request without a key costs at most
 * this much parsing (~0.5 MB of short-lived heap), whatever its length.
 */
export const KEYLESS_MAX_TOKENS = 1_000;
/**
 * Bytes of a keyless request's body (its document, variables and name): 1,000 tokens of public calls
 * fit in a few KiB. A longer body is the 401 of a request without a key, refused before it is
 * buffered, so that a flood of large keyless bodies leaves no strings to collect.
 */
export const KEYLESS_MAX_BODY_BYTES = 16 * 1024;

/**
 * Parses a query text, refused as `invalid_request` when it is not GraphQL or nests deeper than
 * MAX_NESTING (before graphql-js's recursive descent could overflow the stack). Parsed documents are
 * shared by text (documentCache.ts); `keep` (the caller is authenticated and counted) lets this one be
 * kept for the next request.
 */
export function parseQuery(query: string, keep: boolean, maxTokens = MAX_TOKENS): DocumentNode {
  const parsed = parsedDocument(query);
  if (parsed) return parsed;
  const nesting = bracketNesting(query);
  if (nesting > MAX_NESTING) throw ApiError.invalid(`Query nested too deeply: ${nesting} levels of brackets, at most ${MAX_NESTING}`);
  try {
    return parseDocument(query, { maxTokens }, keep);
  } catch (err) {
    // graphql-js's GraphQLError names the position; anything else is the engine's and stays here.
    const message = err instanceof Error && err.name === 'GraphQLError' ? err.message : 'Query could not be parsed';
    throw ApiError.invalid(message);
  }
}

/** The deepest bracket nesting of a GraphQL text, strings and comments left out. */
export function bracketNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x28 || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x29 || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x23) {
      // A comment runs to the end of its line.
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22) {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        i = end === -1 ? text.length : end + 2;
      } else {
        for (i++; i < text.length; i++) {
          const s = text.charCodeAt(i);
          if (s === 0x5c) i++;
          else if (s === 0x22 || s === 0x0a || s === 0x0d) break;
        }
      }
    }
  }
  return deepest;
}
