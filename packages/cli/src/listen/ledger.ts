import { readJson, writePrivateJson } from '../configStore';

/** What survives a restart: the last event handed on, and the ids of the latest ones (newest last). */
export interface LedgerState {
  anchor: string | null;
  recent: string[];
}

/** Ids kept on disk: more than any plausible reordering window of the gateway's event list. */
export const RECENT_IDS = 1000;

/**
 * Which events have been handed on (forwarded, printed), so that a reconnect or a restart catches up
 * from the last one without sending any twice. In memory for the run; with a file, also on disk after
 * every event (written before the next one is sent), so a killed process resumes where it stopped.
 */
export class Ledger {
  private state: LedgerState | null;
  private readonly seen = new Set<string>();

  constructor(private readonly file: string | null) {
    const saved = file ? readJson<LedgerState>(file) : null;
    this.state = saved && Array.isArray(saved.recent) ? { anchor: saved.anchor ?? null, recent: saved.recent.slice(-RECENT_IDS) } : null;
    for (const id of this.state?.recent ?? []) this.seen.add(id);
  }

  /** False until a first baseline: then there is nothing to catch up from. */
  get initialized(): boolean {
    return this.state !== null;
  }

  /** The last event handed on; null when none was and the account had no events at the baseline. */
  get anchor(): string | null {
    return this.state?.anchor ?? null;
  }

  /** The events that existed when pgw first started (newest first): not sent, only remembered. */
  baseline(newestFirst: readonly { id: string }[]): void {
    const ids = newestFirst.map((e) => e.id);
    this.state = { anchor: ids[0] ?? null, recent: ids.reverse() };
    for (const id of ids) this.seen.add(id);
    this.save();
  }

  has(id: string): boolean {
    return this.seen.has(id);
  }

  record(id: string): void {
    const state = (this.state ??= { anchor: null, recent: [] });
    state.anchor = id;
    state.recent.push(id);
    if (state.recent.length > RECENT_IDS) state.recent.splice(0, state.recent.length - RECENT_IDS);
    this.seen.add(id);
    // The in-memory set only grows for the run; past a bound it falls back to what the file keeps.
    if (this.seen.size > RECENT_IDS * 100) {
      this.seen.clear();
      for (const kept of state.recent) this.seen.add(kept);
    }
    this.save();
  }

  private save(): void {
    if (this.file && this.state) writePrivateJson(this.file, this.state);
  }
}
