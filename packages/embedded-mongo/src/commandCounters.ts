/**
 * What serverStatus reports of the commands run, with MongoDB's meaning, so that a tool reading them
 * (bench/run.ts: commands and writes per request) reads the embedded engine and a real MongoDB alike:
 * - `opcounters`: `insert` documents, `update` and `delete` statements (each attempted one, failed or
 *   not, up to where an ordered write stops), `query` find commands, `getmore` getMore commands,
 *   `command` every other recognized command (findAndModify included, as on MongoDB);
 * - `metrics.commands.<name>`: `total` runs of each recognized command, `failed` those answered with an
 *   error (a write's `writeErrors` are not a failed command); `<UNKNOWN>` unrecognized commands, which
 *   MongoDB leaves out of `opcounters`.
 * Each command costs a map lookup and an increment or two.
 */
export interface CommandCount {
  total: number;
  failed: number;
}

export type OpCounter = 'insert' | 'query' | 'update' | 'delete' | 'getmore' | 'command';

/** Commands counted in an opcounter of their own (write statements are counted by their handlers). */
const OWN_COUNTER: Record<string, OpCounter | null> = { find: 'query', getMore: 'getmore', insert: null, update: null, delete: null };

/** Aliases the engine answers, under the name MongoDB counts them. */
const CANONICAL: Record<string, string> = { findandmodify: 'findAndModify', ismaster: 'isMaster', buildinfo: 'buildInfo' };

export class CommandCounters {
  readonly opcounters: Record<OpCounter, number> = { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 };
  private readonly commands = new Map<string, CommandCount>();
  private unknown = 0;

  /** A recognized command about to run: counted before it runs, as MongoDB does, under MongoDB's name for it. */
  started(name: string): CommandCount {
    const canonical = CANONICAL[name] ?? name;
    let count = this.commands.get(canonical);
    if (!count) this.commands.set(canonical, (count = { total: 0, failed: 0 }));
    count.total++;
    const own = OWN_COUNTER[name];
    if (own === undefined) this.opcounters.command++;
    else if (own !== null) this.opcounters[own]++;
    return count;
  }

  unrecognized(): void {
    this.unknown++;
  }

  /** serverStatus's `opcounters` and `metrics.commands`, copied (the reply is encoded later). */
  report(): { opcounters: Record<OpCounter, number>; metrics: { commands: Record<string, CommandCount | number> } } {
    const commands: Record<string, CommandCount | number> = { '<UNKNOWN>': this.unknown };
    for (const [name, count] of this.commands) commands[name] = { total: count.total, failed: count.failed };
    return { opcounters: { ...this.opcounters }, metrics: { commands } };
  }
}
