/** MongoDB error codes the gateway reacts to (the same from a real MongoDB and the embedded engine). */
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** A unique index refused the write (E11000). */
export function isDuplicateKey(err: unknown): boolean {
  return codeOf(err) === DUPLICATE_KEY;
}

/** The collection exists already (a create raced with another process's). */
export function isNamespaceExists(err: unknown): boolean {
  return codeOf(err) === NAMESPACE_EXISTS;
}
