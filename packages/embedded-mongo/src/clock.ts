/**
 * Logical cluster clock. Every write gets a strictly increasing Timestamp (seconds, counter);
 * it is what the server reports as operationTime and stamps change events with.
 */
import { Timestamp } from 'bson';

export class Clock {
  private t = 0;
  private i = 0;

  next(): Timestamp {
    const now = Math.floor(Date.now() / 1000);
    if (now > this.t) {
      this.t = now;
      this.i = 1;
    } else this.i++;
    return new Timestamp({ t: this.t, i: this.i });
  }

  private cached: { t: number; i: number; ts: Timestamp } | undefined;

  /** The latest timestamp handed out (operationTime on every reply); reused until the clock moves. */
  current(): Timestamp {
    if (this.t === 0) this.next();
    const c = this.cached;
    if (c && c.t === this.t && c.i === this.i) return c.ts;
    this.cached = { t: this.t, i: this.i, ts: new Timestamp({ t: this.t, i: this.i }) };
    return this.cached.ts;
  }
}
