import { createHash } from 'node:crypto';
import { ApiError } from '../errors';
import type { Admission } from '../operations/admit';

/**
 * Documents the operation limits refused, remembered by their text's SHA-256, so that a resend is refused
 * before it is parsed (a 50 KB document is too large for the parsed-document cache). Only refusals that read
 * no variable are kept, so a kept one is exactly what the limits would answer again. Bounded, least recently
 * used first. More: docs/decisions/notes/graphql.md, "Remembered refusals".
 */
export const MAX_ENTRIES = 1_000;
export const MAX_BYTES = 512 * 1024;
/** A Map entry, its object and two strings' headers, rounded up. */
const ENTRY_OVERHEAD_BYTES = 160;

export interface RefusalVariant {
  operationName: string | null | undefined;
  mayIntrospect: boolean;
}

interface Refusal {
  code: ApiError['code'];
  message: string;
  bytes: number;
}

/* eslint-disable no-restricted-syntax -- refusals by text under constant limits (limits.ts), bounded in the process's memory: the same on every gateway */
const refusals = new Map<string, Refusal>();
let totalBytes = 0;
/* eslint-enable no-restricted-syntax */
const stats = { hits: 0, remembered: 0 };

const digestOf = (query: string) => createHash('sha256').update(query).digest('base64');
const keyOf = (digest: string, variant: RefusalVariant) => `${digest}|${variant.mayIntrospect ? 1 : 0}|${variant.operationName ?? ''}`;

/**
 * Whether this text and operation were refused for any caller: the HTTP handler then does not parse it
 * ahead of authentication (readAhead.ts's readAheadOfRequest, which only saves a round trip for reads).
 */
export function isKnownRefusal(query: string, operationName: string | null | undefined): boolean {
  if (refusals.size === 0) return false;
  const digest = digestOf(query);
  return refusals.has(keyOf(digest, { operationName, mayIntrospect: true })) || refusals.has(keyOf(digest, { operationName, mayIntrospect: false }));
}

/** Throws the refusal remembered for this text, operation and caller, if any (counted in `hits`). */
export function throwKnownRefusal(query: string, variant: RefusalVariant): void {
  if (refusals.size === 0) return;
  const key = keyOf(digestOf(query), variant);
  const known = refusals.get(key);
  if (!known) return;
  refusals.delete(key);
  refusals.set(key, known);
  stats.hits++;
  throw new ApiError(known.code, known.message);
}

/** The same, for an admitted caller over any transport. */
export function throwKnownRefusalFor(query: string, operationName: string | null | undefined, admission: Admission): void {
  throwKnownRefusal(query, { operationName, mayIntrospect: callerMayIntrospect(admission) });
}

/** Whether the limits let this caller introspect: a secret or restricted key; not a publishable key, a client token or no key. */
export function callerMayIntrospect(admission: Admission): boolean {
  return admission.auth !== undefined && admission.auth.key.type !== 'publishable';
}

export function rememberRefusal(query: string, variant: RefusalVariant, error: ApiError): void {
  const key = keyOf(digestOf(query), variant);
  const bytes = ENTRY_OVERHEAD_BYTES + 2 * (key.length + error.message.length);
  if (refusals.has(key)) return;
  refusals.set(key, { code: error.code, message: error.message, bytes });
  totalBytes += bytes;
  stats.remembered++;
  while (refusals.size > MAX_ENTRIES || totalBytes > MAX_BYTES) {
    const [oldest, refusal] = refusals.entries().next().value!;
    refusals.delete(oldest);
    totalBytes -= refusal.bytes;
  }
}

/** What the cache holds and has answered (tests, and the bounds listed in docs/operations.md). */
export function refusedDocumentStats(): { entries: number; bytes: number; hits: number; remembered: number } {
  return { entries: refusals.size, bytes: totalBytes, ...stats };
}
