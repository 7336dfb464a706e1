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

  private cached: { t: number; i: number; ts: Timestamp; gossip: ClusterTimeDoc } | undefined;

  current(): Timestamp {
    return this.snapshot().ts;
  }

  /** The gossip document drivers expect on replica set replies (unsigned: no auth here). */
  clusterTime(): ClusterTimeDoc {
    return this.snapshot().gossip;
  }

  /** Every reply carries the cluster time; reuse the objects until the clock moves. */
  private snapshot(): { ts: Timestamp; gossip: ClusterTimeDoc } {
    if (this.t === 0) this.next();
    const c = this.cached;
    if (c && c.t === this.t && c.i === this.i) return c;
    const ts = new Timestamp({ t: this.t, i: this.i });
    this.cached = { t: this.t, i: this.i, ts, gossip: { clusterTime: ts, signature: { hash: ZERO_HASH, keyId: Long.ZERO } } };
    return this.cached;
  }
}

const ZERO_HASH = new Binary(Buffer.alloc(20), 0);

interface ClusterTimeDoc {
  clusterTime: Timestamp;
  signature: { hash: Binary; keyId: Long };
}
