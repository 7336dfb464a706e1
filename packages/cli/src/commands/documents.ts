import { readFile } from 'node:fs/promises';
import type { PgwClient } from '@pgw/client';
import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { UsageError } from '../errors';
import { createOutput } from '../output';
import { printable } from '../printable';

type ApolloOperation = { id: string; name?: string; type?: 'query' | 'mutation' | 'subscription'; body: string };
/** One request's part of a manifest, in the manifest's own format. */
type Part = { format: 'apollo-persisted-query-manifest'; version: 1; operations: ApolloOperation[] } | Record<string, string>;

/**
 * Bytes of manifest per request: the gateway reads bodies up to MAX_BODY_BYTES (64 KiB by default), and
 * a frontend's manifest is often larger, so it goes in parts of at most this much (a document larger
 * than a part goes alone, and the gateway says whether it fits).
 */
export const PART_BYTES = 48 * 1024;

/**
 * The parts of a manifest file, in its own format: Apollo's `generate-persisted-query-manifest` output,
 * or graphql-codegen's client preset `persisted-documents.json` (id → text). Anything else is a usage error.
 */
export function manifestParts(text: string, file: string, partBytes = PART_BYTES): Part[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) throw new UsageError(`${file} is not a manifest (a JSON object)`);
  const record = manifest as Record<string, unknown>;
  if (record.format === 'apollo-persisted-query-manifest') {
    if (!Array.isArray(record.operations)) throw new UsageError(`${file}: an Apollo manifest needs 'operations'`);
    return chunk(record.operations as ApolloOperation[], partBytes).map((operations) => ({ format: 'apollo-persisted-query-manifest', version: 1, operations }));
  }
  const entries = Object.entries(record);
  if (entries.length === 0 || entries.some(([, body]) => typeof body !== 'string')) {
    throw new UsageError(`${file} is neither an Apollo persisted query manifest nor a client preset map of id to document`);
  }
  return chunk(entries as Array<[string, string]>, partBytes).map((part) => Object.fromEntries(part));
}

function chunk<T>(items: T[], partBytes: number): T[][] {
  const parts: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item));
    if (current.length > 0 && bytes + size > partBytes) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

export async function pushParts(api: PgwClient, parts: Part[]) {
  const registered = [];
  for (const part of parts) {
    const { data } = await api.POST('/graphql/documents', { body: part });
    registered.push(...data.data);
  }
  return registered;
}

/**
 * `pgw documents push FILE`: registers a manifest's documents as the account's trusted documents
 * (POST /v1/graphql/documents, in parts). A part the gateway refuses stops the push there (the parts
 * before it stay registered; pushing again is safe: registering a document twice changes nothing).
 */
export async function documentsPush(file: string, opts: ConnectionFlags & { json?: boolean }): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const parts = manifestParts(text, file);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  out.progress(`registering the documents of ${file} (${parts.length} request${parts.length === 1 ? '' : 's'})`);
  const registered = await pushParts(apiClient(conn), parts);
  if (out.json) return out.object({ object: 'list', data: registered, has_more: false });
  for (const d of registered) out.line(`${printable(d.id)}  ${printable(d.type)}  ${printable(d.name ?? '(anonymous)')}`);
  out.line(`${registered.length} trusted document${registered.length === 1 ? '' : 's'} registered`);
}
