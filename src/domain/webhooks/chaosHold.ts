import { REORDER_HOLD_MAX_MS, type ChaosPlan } from './chaos';

/**
 * The waits chaos puts before a genuine delivery's first attempt, in this process: `delay_ms`, then
 * for a reordered one, until another delivery of the same endpoint has been sent here (at most
 * REORDER_HOLD_MAX_MS; the next one may be sent by another process, which this one does not hear).
 * The delivery's lease covers the wait (deliveryService.ts), so no sweeper takes it meanwhile.
 */
// Shared by the gateways of a process: a hold waits for another delivery of the endpoint to be sent, by
// anyone; a send by the process's other gateway is one it would otherwise not hear.
// eslint-disable-next-line no-restricted-syntax -- holds per endpoint of the database, released by any sender
const waiting = new Map<string, Set<() => void>>();

/** Called after every genuine attempt's request: the endpoint's held deliveries may go. */
export function endpointSent(endpointId: string): void {
  const held = waiting.get(endpointId);
  if (!held) return;
  waiting.delete(endpointId);
  for (const release of held) release();
}

function untilNextSent(endpointId: string): Promise<void> {
  return new Promise((resolve) => {
    let held = waiting.get(endpointId);
    if (!held) waiting.set(endpointId, (held = new Set()));
    const release = () => {
      clearTimeout(timer);
      waiting.get(endpointId)?.delete(release);
      resolve();
    };
    const timer = setTimeout(release, REORDER_HOLD_MAX_MS);
    timer.unref();
    held.add(release);
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Resolves when the delivery may be attempted; at once without a plan. */
export async function chaosHold(endpointId: string, plan: ChaosPlan | null | undefined): Promise<void> {
  if (!plan) return;
  if (plan.delay_ms > 0) await sleep(plan.delay_ms);
  if (plan.reorder) await untilNextSent(endpointId);
}

/** How much longer than usual the first attempt's lease must last for the plan's waits. */
export function holdMs(plan: ChaosPlan | null | undefined): number {
  return plan ? plan.delay_ms + (plan.reorder ? REORDER_HOLD_MAX_MS : 0) : 0;
}
