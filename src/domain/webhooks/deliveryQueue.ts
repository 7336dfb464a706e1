/**
 * Bounds the number of tasks in flight (the creation of webhook deliveries: a burst of events must not
 * start thousands at once) and keeps tasks that share a key (a payment) in order, so that a receiver
 * gets `reference.paid` before `payment.succeeded` when both are sent right away.
 */
export class DeliveryQueue {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly limit: number) {}

  get inFlight(): number {
    return this.active;
  }

  /** Runs `task` when a slot is free and every earlier task with the same key has finished. */
  run(key: string | null, task: () => Promise<void>): Promise<void> {
    if (!key) return this.withSlot(task);
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.withSlot(task)).catch(() => undefined);
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }

  /** Resolves when nothing is queued or running (shutdown). */
  async idle(): Promise<void> {
    while (this.active > 0 || this.waiting.length > 0 || this.chains.size > 0) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async withSlot(task: () => Promise<void>): Promise<void> {
    // A finishing task hands its slot straight to the next waiter, so the limit is never exceeded.
    if (this.active >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
