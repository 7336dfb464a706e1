/**
 * The Unix socket could not be listened on; `code` is the system's (EADDRINUSE, EACCES ...). A module of
 * its own so that the worker-thread starter (threaded.ts) has it without loading the engine.
 */
export class SocketListenError extends Error {
  override readonly name = 'SocketListenError';
  readonly code: string | undefined;
  constructor(
    readonly socketPath: string,
    cause: unknown,
  ) {
    super(`cannot listen on the Unix socket ${socketPath}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.code = (cause as NodeJS.ErrnoException | undefined)?.code;
  }
}
