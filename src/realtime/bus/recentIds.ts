/** A bounded set of recently seen ids (insertion order eviction). */
export class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly capacity: number) {}
  /** Adds the id; false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return true;
  }
}
