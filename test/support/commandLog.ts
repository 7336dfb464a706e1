import { Connection } from 'mongodb/lib/cmap/connection.js';

/**
 * The commands this thread sends while `work` runs, in order: `sent` when one leaves, `answered` when
 * its reply is back (the gateway runs in this thread).
 */
export async function commandLog(work: () => Promise<unknown>): Promise<string[]> {
  const log: string[] = [];
  const send = Connection.prototype.command;
  Connection.prototype.command = function recorded(this: Connection, ns, command, options, responseType) {
    const name = Object.keys(command)[0]!;
    const what = `${name} ${String(command[name])}`;
    log.push(`sent ${what}`);
    const reply = send.call(this, ns, command, options, responseType);
    void reply.then(
      () => log.push(`answered ${what}`),
      () => log.push(`answered ${what}`),
    );
    return reply;
  };
  try {
    await work();
  } finally {
    Connection.prototype.command = send;
  }
  return log;
}
