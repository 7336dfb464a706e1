/**
 * A small map whose entries are trusted for `ttlMs`, bounded in entries and bytes (the oldest written
 * goes first). What another process changes (a deleted document, a changed mode) is seen here once
 * the entry expires; what this process changes it forgets at once (`delete`).
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; at: number; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number = () => 64,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at < this.ttlMs) return entry.value;
    this.delete(key);
    return undefined;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.delete(key);
    const bytes = this.sizeOf(value) + 2 * key.length;
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, at: now, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Forgets every entry whose key starts with `prefix` (an account's, after its settings change). */
  deletePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
