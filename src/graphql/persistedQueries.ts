import type { Credentials } from '../operations/admit';
import type { Caller } from '../operations/caller';

/**
 * Automatic persisted queries, kept per account and credential kind, so that a hash one credential stored is
 * unknown to every other (a client token in a browser cannot probe what a secret key registered). Bounded per
 * scope and in all, least recently used first; an evicted hash is `PersistedQueryNotFound`, and the client
 * resends its text. More: docs/decisions/notes/graphql.md, "Automatic persisted queries".
 */
const MAX_SCOPE_ENTRIES = 256;
const MAX_SCOPE_BYTES = 2 ** 20;
const MAX_ENTRIES = 20_000;
const MAX_BYTES = 32 * 2 ** 20;
/** What an entry holds beyond its text (two bytes a character at most): its key, twice, and the maps' slots. */
const ENTRY_OVERHEAD_BYTES = 300;

interface Entry {
  scope: string;
  hash: string;
  text: string;
  bytes: number;
}
interface Scope {
  /** By hash, in order of last use. */
  entries: Map<string, Entry>;
  bytes: number;
}

/** Every entry by `scope + hash`, in order of last use (the first is the oldest). */
/* eslint-disable no-restricted-syntax -- persisted texts by scope and hash, bounded in the process's memory: a hash names the same text on every gateway */
const all = new Map<string, Entry>();
const scopes = new Map<string, Scope>();
let totalBytes = 0;
/* eslint-enable no-restricted-syntax */

/**
 * Whose persisted queries a caller sees: its account's, for the kind of credential it came with; null
 * for a caller without credentials (it neither finds nor stores any).
 */
export function persistedQueryScope(caller: Caller, presented: Credentials['kind']): string | null {
  switch (caller.kind) {
    case 'public':
      return null;
    case 'clientToken':
      return `${caller.actor.accountId}:client_token`;
    case 'key':
      if (presented === 'session') return `${caller.actor.accountId}:dashboard_session`;
      return `${caller.actor.accountId}:${caller.key.type === 'publishable' ? 'publishable' : 'key'}`;
  }
}

/** The text stored under `hash` in `scope`, if any (it becomes the scope's most recently used). */
export function recallQuery(scope: string | null, hash: string): string | undefined {
  if (scope === null) return undefined;
  const entry = scopes.get(scope)?.entries.get(hash);
  if (!entry) return undefined;
  touch(entry);
  return entry.text;
}

/** Stores `text` under `hash` in `scope`, within the bounds (nothing for a keyless caller). */
export function rememberQuery(scope: string | null, hash: string, text: string): void {
  if (scope === null) return;
  const bytes = 2 * text.length + ENTRY_OVERHEAD_BYTES;
  if (bytes > MAX_SCOPE_BYTES) return;
  const own = scopes.get(scope) ?? { entries: new Map<string, Entry>(), bytes: 0 };
  scopes.set(scope, own);
  const old = own.entries.get(hash);
  if (old) {
    touch(old);
    return;
  }
  const entry: Entry = { scope, hash, text, bytes };
  own.entries.set(hash, entry);
  own.bytes += bytes;
  all.set(keyOf(entry), entry);
  totalBytes += bytes;
  while (own.entries.size > MAX_SCOPE_ENTRIES || own.bytes > MAX_SCOPE_BYTES) drop(own.entries.values().next().value!);
  while (all.size > MAX_ENTRIES || totalBytes > MAX_BYTES) drop(all.values().next().value!);
}

const keyOf = (entry: Entry) => `${entry.scope}\u0000${entry.hash}`;

function touch(entry: Entry): void {
  const own = scopes.get(entry.scope)!;
  own.entries.delete(entry.hash);
  own.entries.set(entry.hash, entry);
  all.delete(keyOf(entry));
  all.set(keyOf(entry), entry);
}

function drop(entry: Entry): void {
  const own = scopes.get(entry.scope)!;
  own.entries.delete(entry.hash);
  own.bytes -= entry.bytes;
  if (own.entries.size === 0) scopes.delete(entry.scope);
  all.delete(keyOf(entry));
  totalBytes -= entry.bytes;
}

export interface PersistedQueryStats {
  entries: number;
  bytes: number;
  scopes: number;
}

/** How full the store is (tests and metrics read this rather than the store itself). */
export function persistedQueryStats(): PersistedQueryStats {
  return { entries: all.size, bytes: totalBytes, scopes: scopes.size };
}
