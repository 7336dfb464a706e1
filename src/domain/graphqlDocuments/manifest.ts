import { createHash } from 'node:crypto';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { ApiError } from '../../errors';
import type { components } from '../../../generated/openapi';

/**
 * Tokens one document may hold, as src/graphql/parseQuery.ts lets a counted caller's text hold (it reads
 * this constant): a document registered here must also be one the gateway would parse when it runs.
 */
export const MAX_DOCUMENT_TOKENS = 5_000;

export type DocumentType = 'query' | 'mutation' | 'subscription';

/** One document of a manifest, checked: its text hashes to its id and holds one operation. */
export interface ManifestDocument {
  hash: string;
  name: string | null;
  type: DocumentType;
  body: string;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `sha256:<hex>` or `<hex>` → the lower-case hex, or undefined for anything else. */
export function hashOfId(id: string): string | undefined {
  const hex = id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
  return /^[0-9a-fA-F]{64}$/.test(hex) ? hex.toLowerCase() : undefined;
}

/**
 * The documents of a manifest in either format the contract takes (Apollo's, or the client preset's
 * map), each checked; the first bad one refuses the whole manifest (400 naming its id), so that a
 * manifest is registered whole or not at all.
 */
export function readManifest(manifest: components['schemas']['GraphqlDocumentManifest']): ManifestDocument[] {
  const sent: Array<{ id: string; body: string; name?: string; type?: DocumentType }> =
    'format' in manifest && manifest.format === 'apollo-persisted-query-manifest' && Array.isArray(manifest.operations)
      ? (manifest as components['schemas']['ApolloPersistedQueryManifest']).operations
      : Object.entries(manifest as Record<string, string>).map(([id, body]) => ({ id, body }));
  const byHash = new Map<string, ManifestDocument>();
  for (const entry of sent) {
    const document = checkedDocument(entry);
    byHash.set(document.hash, document);
  }
  return [...byHash.values()];
}

function checkedDocument(entry: { id: string; body: string; name?: string; type?: DocumentType }): ManifestDocument {
  const hash = hashOfId(entry.id);
  const shown = `'${entry.id.slice(0, 80)}'`;
  if (hash === undefined) throw ApiError.invalid(`Document id ${shown} is not a SHA-256 digest (64 hex digits, optionally after 'sha256:')`);
  if (sha256Hex(entry.body) !== hash) {
    throw ApiError.invalid(`Document ${shown} does not match its id: the id must be the SHA-256 of the document's text, exactly as the client sends it`);
  }
  let operations: OperationDefinitionNode[];
  try {
    const document = parse(entry.body, { maxTokens: MAX_DOCUMENT_TOKENS, noLocation: true });
    operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  } catch (err) {
    const why = err instanceof Error && err.name === 'GraphQLError' ? err.message : 'it could not be parsed';
    throw ApiError.invalid(`Document ${shown} is not a GraphQL document: ${why}`);
  }
  const [operation] = operations;
  if (operations.length !== 1 || !operation) throw ApiError.invalid(`Document ${shown} must hold exactly one operation (it holds ${operations.length})`);
  const type = operation.operation as DocumentType;
  if (entry.type !== undefined && entry.type !== type) throw ApiError.invalid(`Document ${shown} is a ${type}, not a ${entry.type} as the manifest says`);
  return { hash, name: entry.name ?? operation.name?.value ?? null, type, body: entry.body };
}
