/**
 * A push-to-pull adapter: listeners push values, graphql-js pulls them as an AsyncIterator. Ending the
 * iteration (client unsubscribes, socket closes, server shuts down) runs `onClose` once, which is where
 * bus subscriptions and watchers are released.
 */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  private readonly values: T[] = [];
  private readonly waiting: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (err: unknown) => void }> = [];
  private closed = false;
  private failure: unknown = null;

  constructor(private readonly onClose: () => void) {}

  push(value: T): void {
    if (this.closed) return;
    const next = this.waiting.shift();
    if (next) next.resolve({ value, done: false });
    else this.values.push(value);
  }

  /** Ends the iteration with an error (delivered after the values already queued). */
  fail(err: unknown): void {
    if (this.closed) return;
    const waiter = this.waiting.shift();
    if (waiter) waiter.reject(err);
    else this.failure = err;
    this.close();
  }

  /** Ends the iteration once the values already queued have been taken. */
  end(): void {
    this.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  next(): Promise<IteratorResult<T>> {
    const value = this.values.shift();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.failure !== null) {
      const err = this.failure;
      this.failure = null;
      return Promise.reject(err);
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    this.values.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err?: unknown): Promise<IteratorResult<T>> {
    this.close();
    return Promise.reject(err);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.resolve({ value: undefined, done: true });
    try {
      this.onClose();
    } catch {
      // releasing resources must not break the iteration's end
    }
  }
}
