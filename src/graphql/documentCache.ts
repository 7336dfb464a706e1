import type { DocumentStore } from '@apollo/server';
import { parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type ParseOptions } from './graphqljs';

/**
 * Parsed and validated documents, shared by every operation that sends the same text (HTTP, WebSocket,
 * Apollo): thousands of subscribers with one text hold one copy, validated once. Only an authenticated
 * caller's are kept, bounded in entries and estimated bytes. More: docs/decisions/notes/graphql.md, "The document cache".
 */
const MAX_ENTRIES = 1_000;
/** 32 MiB: some 6,000 short operations (~5 KiB each), far more than any client sends. */
const MAX_BYTES = 32 * 2 ** 20;
/** 1 MiB, some 2,000 tokens: GraphiQL's introspection query (~700 tokens) is kept, a flood of large ones is not. */
const MAX_DOCUMENT_BYTES = 2 ** 20;
const BYTES_PER_TOKEN = 512;

interface Entry {
  document: DocumentNode;
  bytes: number;
  /** The SHA-256 Apollo looks the text up by, once Apollo has asked for it (apolloDocumentStore). */
  hash?: string;
}
/** By query text, in order of last use (a Map iterates in insertion order: the first is the oldest). */
/* eslint-disable no-restricted-syntax -- parsed documents by text, one copy for every client of the process, bounded in its memory: a text parses the same on every gateway */
const documents = new Map<string, Entry>();
const textOfHash = new Map<string, string>();
let totalBytes = 0;
const valid = new WeakMap<GraphQLSchema, WeakSet<DocumentNode>>();
/* eslint-enable no-restricted-syntax */

/** The document already parsed from this text, if any (a look-up: it stores nothing). */
export function parsedDocument(query: string): DocumentNode | undefined {
  const entry = documents.get(query);
  if (!entry) return undefined;
  documents.delete(query);
  documents.set(query, entry);
  return entry.document;
}

/**
 * Parses `query`, or returns its kept document. `keep`: the caller is authenticated and counted, so the
 * document may be kept for the next request that sends the same text.
 */
export function parseDocument(query: string, options: ParseOptions | undefined, keep: boolean): DocumentNode {
  const known = parsedDocument(query);
  if (known) return known;
  const document = parse(query, options);
  if (keep) keepDocument(query, document);
  return document;
}

/** Keeps a document parsed from `query` (one parsed ahead of admission, say), within the bounds. */
export function keepDocument(query: string, document: DocumentNode): void {
  if (documents.has(query)) return;
  const bytes = estimatedBytes(query, document);
  if (bytes > MAX_DOCUMENT_BYTES) return;
  documents.set(query, { document, bytes });
  totalBytes += bytes;
  while (documents.size > MAX_ENTRIES || totalBytes > MAX_BYTES) {
    const [oldest, entry] = documents.entries().next().value!;
    forget(oldest, entry);
  }
}

function forget(query: string, entry: Entry): void {
  documents.delete(query);
  totalBytes -= entry.bytes;
  if (entry.hash !== undefined) textOfHash.delete(entry.hash);
}

/** The heap a parsed document holds, estimated high: BYTES_PER_TOKEN per token, plus its text (two bytes a character at most). */
function estimatedBytes(query: string, document: DocumentNode): number {
  let tokens = 0;
  for (let token = document.loc?.startToken ?? null; token; token = token.next) tokens++;
  return tokens * BYTES_PER_TOKEN + 2 * query.length;
}

export interface DocumentCacheStats {
  entries: number;
  bytes: number;
  maxEntries: number;
  maxBytes: number;
  maxDocumentBytes: number;
}

/** How full the cache is (tests and metrics read this rather than the cache itself). */
export function documentCacheStats(): DocumentCacheStats {
  return { entries: documents.size, bytes: totalBytes, maxEntries: MAX_ENTRIES, maxBytes: MAX_BYTES, maxDocumentBytes: MAX_DOCUMENT_BYTES };
}

/** `validate`, remembering the documents that passed against this schema. */
export function validateDocument(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] {
  if (valid.get(schema)?.has(document)) return [];
  const errors = validate(schema, document);
  if (errors.length === 0) markValid(schema, document);
  return errors;
}

function markValid(schema: GraphQLSchema, document: DocumentNode): void {
  let passed = valid.get(schema);
  if (!passed) valid.set(schema, (passed = new WeakSet()));
  passed.add(document);
}

/**
 * Apollo's document store, read from this cache: Apollo parses the text admission resolved once more
 * and would keep its own copy of every document (its default store holds 30 MiB measured as JSON, which
 * leaves out the tokens: some ten times that in heap). Here it finds the documents admission kept, by
 * the SHA-256 it keys them with, and stores nothing of its own: what Apollo `set`s is a document that
 * passed its validation (graphql-js's rules, as validateDocument's), so the kept document of the same
 * text is marked valid and found by the text's hash from then on. A document admission did not keep
 * (too large, or an unauthenticated caller's) is parsed by Apollo for each request.
 */
export function apolloDocumentStore(schema: GraphQLSchema): DocumentStore {
  // Apollo's key is `<schema hash>:<query hash>` when a store is given.
  const hashOf = (key: string) => key.slice(key.lastIndexOf(':') + 1);
  return {
    async get(key) {
      const text = textOfHash.get(hashOf(key));
      const document = text === undefined ? undefined : parsedDocument(text);
      return document && valid.get(schema)?.has(document) ? document : undefined;
    },
    async set(key, apolloDocument) {
      const text = apolloDocument.loc?.source.body;
      const entry = text === undefined ? undefined : documents.get(text);
      if (text === undefined || !entry) return;
      if (entry.hash === undefined) {
        entry.hash = hashOf(key);
        textOfHash.set(entry.hash, text);
      }
      markValid(schema, entry.document);
    },
    async delete(key) {
      const text = textOfHash.get(hashOf(key));
      const entry = text === undefined ? undefined : documents.get(text);
      if (text !== undefined && entry) forget(text, entry);
      return true;
    },
  };
}
