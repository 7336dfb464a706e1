/**
 * Logical cluster clock. Every write gets a strictly increasing Timestamp (seconds, counter);
 * it is what the server reports as operationTime / $clusterTime and stamps change events with.
 */
import { Binary, Long, Timestamp } from 'bson';

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

  current(): Timestamp {
    if (this.t === 0) return this.next();
    return new Timestamp({ t: this.t, i: this.i });
  }

  /** The gossip document drivers expect on replica set replies (unsigned: no auth here). */
  clusterTime(): { clusterTime: Timestamp; signature: { hash: Binary; keyId: Long } } {
    return { clusterTime: this.current(), signature: { hash: ZERO_HASH, keyId: Long.ZERO } };
  }
}

const ZERO_HASH = new Binary(Buffer.alloc(20), 0);
