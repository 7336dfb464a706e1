// The one driver internal src/db/commandTiming.ts wraps: the driver ships no types for its lib/ files.
declare module 'mongodb/lib/cmap/connection.js' {
  export class Connection {
    command(ns: { db: string; collection?: string }, command: Record<string, unknown>, options?: unknown, responseType?: unknown): Promise<unknown>;
  }
}
