import { parse, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type ParseOptions } from './graphqljs';

/**
 * Parsed and validated documents, shared by every operation that sends the same text (HTTP and
 * WebSocket; admission.ts parses through here). A live subscription keeps its document for as long as it runs, and a parsed document holds its
 * whole token list and source locations (some 8 KiB for a short subscription): thousands of clients
 * subscribing with the same text then hold one copy, and it is validated once. graphql-js never mutates
 * a document. Bounded: the oldest entry goes first; a syntax error is not kept (parse throws it again).
 */
const MAX_ENTRIES = 1_000;
const documents = new Map<string, DocumentNode>();
const valid = new WeakMap<GraphQLSchema, WeakSet<DocumentNode>>();

/** The document already parsed from this text, if any. */
export function parsedDocument(query: string): DocumentNode | undefined {
  return documents.get(query);
}

export function parseDocument(query: string, options?: ParseOptions): DocumentNode {
  let document = documents.get(query);
  if (document) return document;
  document = parse(query, options);
  documents.set(query, document);
  if (documents.size > MAX_ENTRIES) documents.delete(documents.keys().next().value!);
  return document;
}

/** `validate`, remembering the documents that passed against this schema. */
export function validateDocument(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] {
  let passed = valid.get(schema);
  if (passed?.has(document)) return [];
  const errors = validate(schema, document);
  if (errors.length === 0) {
    if (!passed) valid.set(schema, (passed = new WeakSet()));
    passed.add(document);
  }
  return errors;
}
