/** MongoDB error codes the gateway reacts to (the same from a real MongoDB and the embedded engine). */
const DUPLICATE_KEY = 11000;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** A unique index refused the write (E11000). */
export function isDuplicateKey(err: unknown): boolean {
  return codeOf(err) === DUPLICATE_KEY;
}

/** An index of the same name exists with other options or keys. */
export function isIndexConflict(err: unknown): boolean {
  const code = codeOf(err);
  return code === INDEX_OPTIONS_CONFLICT || code === INDEX_KEY_SPECS_CONFLICT;
}
