/**
 * MongoDB-shaped command errors. The driver and mongoose branch on `code` / `codeName`
 * (e.g. 11000 for duplicate keys, 251 for NoSuchTransaction), so these must match the server's.
 */
export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  FailedToParse: 9,
  TypeMismatch: 14,
  InvalidLength: 16,
  InvalidBSON: 22,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  MaxTimeMSExpired: 50,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  OperationFailed: 96,
  WriteConflict: 112,
  NoSuchTransaction: 251,
  TransactionTooOld: 225,
  ChangeStreamHistoryLost: 286,
  Location40415: 40415,
  DuplicateKey: 11000,
  OutOfDiskSpace: 14031,
} as const;

const codeNames: Record<number, string> = Object.fromEntries(
  Object.entries(ErrorCodes).map(([name, code]) => [code, name]),
);

export class MongoCommandError extends Error {
  readonly code: number;
  readonly codeName: string;
  /** Extra top-level fields copied into the error reply (keyPattern, keyValue, errorLabels...). */
  readonly extra: Record<string, unknown>;

  constructor(code: number, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.codeName = codeNames[code] ?? 'UnknownError';
    this.extra = extra;
  }

  toReply(): Record<string, unknown> {
    return { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName, ...this.extra };
  }

  /** Shape used inside `writeErrors` arrays of insert/update/delete replies. */
  toWriteError(index: number): Record<string, unknown> {
    const { errorLabels: _labels, ...rest } = this.extra;
    return { index, code: this.code, errmsg: this.message, ...rest };
  }
}

export function errorReply(err: unknown): Record<string, unknown> {
  if (err instanceof MongoCommandError) return err.toReply();
  const message = err instanceof Error ? err.message : String(err);
  // mingo throws plain Errors for bad operators; report them as BadValue rather than crashing.
  return { ok: 0, errmsg: message, code: ErrorCodes.BadValue, codeName: 'BadValue' };
}

export function badValue(message: string): MongoCommandError {
  return new MongoCommandError(ErrorCodes.BadValue, message);
}
