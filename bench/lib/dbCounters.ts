import mongoose from 'mongoose';

/**
 * Commands and writes the database process served, read from its serverStatus (`metrics.commands`,
 * `opcounters`), which the embedded engine answers with MongoDB's meaning: the same reading works
 * against a real MongoDB. Every client's commands count, the gateway's background timers included.
 */
export interface DbCounts {
  /** Commands of every kind, the serverStatus readings themselves left out. */
  commands: number;
  /** Documents inserted plus update and delete statements (opcounters insert + update + delete). */
  writes: number;
}

interface Reading {
  commands: number;
  serverStatus: number;
  writes: number;
}

export interface DbCounterReader {
  /** Runs `fn` and returns, with its result, what the database served meanwhile. */
  around<T>(fn: () => Promise<T>): Promise<{ result: T; counts: DbCounts }>;
  close(): Promise<void>;
}

/** One driver client of its own (one connection), so that its readings wait behind no other command. */
export async function openDbCounters(url: string): Promise<DbCounterReader> {
  const client = await new mongoose.mongo.MongoClient(url, { maxPoolSize: 1 }).connect();
  const admin = client.db('admin');
  const read = async (): Promise<Reading> => {
    const s = await admin.command({ serverStatus: 1 });
    let commands = 0;
    for (const count of Object.values(s.metrics?.commands ?? {})) {
      // `<UNKNOWN>` is a number: unrecognized commands, none of which the gateway sends.
      if (typeof count === 'object' && count !== null && 'total' in count) commands += Number(count.total);
    }
    const op = s.opcounters ?? {};
    return { commands, serverStatus: Number(s.metrics?.commands?.serverStatus?.total ?? 0), writes: Number(op.insert) + Number(op.update) + Number(op.delete) };
  };
  return {
    async around(fn) {
      const before = await read();
      const result = await fn();
      const after = await read();
      return {
        result,
        counts: { commands: after.commands - before.commands - (after.serverStatus - before.serverStatus), writes: after.writes - before.writes },
      };
    },
    close: () => client.close(),
  };
}
