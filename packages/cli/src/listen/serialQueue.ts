/**
 * Runs tasks one after another in the order pushed (live events wait behind a catch-up). A task that
 * throws is reported to `onError` and the queue goes on; after stop() new tasks are dropped (the
 * connection they belong to is gone, and the next connection's catch-up covers them).
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly onError: (err: unknown) => void) {}

  push(task: () => Promise<void>): void {
    if (this.stopped) return;
    this.tail = this.tail.then(async () => {
      if (this.stopped) return;
      try {
        await task();
      } catch (err) {
        this.onError(err);
      }
    });
  }

  stop(): void {
    this.stopped = true;
  }

  idle(): Promise<void> {
    return this.tail;
  }
}
