/**
 * The `: keep-alive` comments of every open SSE stream, from one timer rather than one interval per
 * stream: a wheel of SLOTS slots, one visited per tick, so a stream hears from it every `periodMs`
 * (give or take a tick) and the writes of thousands of streams are spread over the period. The timer
 * runs only while a stream is registered.
 */
const SLOTS = 15;

export interface KeptAlive {
  comment(text: string): void;
}

export function keepAliveWheel(periodMs: number) {
  const slots = Array.from({ length: SLOTS }, () => new Set<KeptAlive>());
  let cursor = 0;
  let count = 0;
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    cursor = (cursor + 1) % SLOTS;
    for (const conn of slots[cursor]!) conn.comment('keep-alive');
  };
  return {
    /** Registers a stream; returns what unregisters it. */
    add(conn: KeptAlive): () => void {
      // The slot visited last comes round again a full period from now.
      const slot = slots[cursor]!;
      slot.add(conn);
      count++;
      if (!timer) {
        timer = setInterval(tick, periodMs / SLOTS);
        timer.unref();
      }
      return () => {
        if (!slot.delete(conn)) return;
        if (--count === 0 && timer) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
  };
}
