import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Order {
  id: string;
  amount: number;
  payment_intent: string;
  status: 'awaiting_payment' | 'fulfilled';
  fulfilled_at: string | null;
}

interface State {
  orders: Record<string, Order>;
  /** Service-Event-Id of every delivery handled: a redelivery of one of them changes nothing. */
  processedEvents: string[];
  /** One line per fulfilment ever made; the test checks it holds one per payment. */
  fulfilments: Array<{ payment_intent: string; order: string; at: string }>;
}

/**
 * The merchant's records in one JSON file (`<dataDir>/merchant-state.json`), so de-duplication survives a
 * restart of the merchant. Every check-and-change below is synchronous: Node runs one at a time, so two
 * copies of a delivery arriving together cannot both pass the check. Each change is written to a
 * temporary file and renamed over the old one, so a crash leaves the old state or the new, never half.
 * A real shop keeps this in its database, with unique keys on the event id and the payment id.
 */
export class MerchantStore {
  private readonly file: string;
  private readonly state: State;
  private readonly seen: Set<string>;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(dataDir, 'merchant-state.json');
    this.state = readState(this.file);
    this.seen = new Set(this.state.processedEvents);
  }

  addOrder(order: Order): void {
    this.state.orders[order.id] = order;
    this.save();
  }

  order(id: string): Order | undefined {
    return this.state.orders[id];
  }

  fulfilments(): State['fulfilments'] {
    return [...this.state.fulfilments];
  }

  /**
   * Handles one verified delivery: false when its event id was handled before (nothing done), else
   * runs `apply` and records the id, in one step.
   */
  handleEventOnce(eventId: string, apply: () => void): boolean {
    if (this.seen.has(eventId)) return false;
    apply();
    this.seen.add(eventId);
    this.state.processedEvents.push(eventId);
    this.save();
    return true;
  }

  /** Fulfils the order paid by `paymentIntentId` unless it already is: once per payment, whatever arrives. */
  fulfilOnce(paymentIntentId: string): boolean {
    const order = Object.values(this.state.orders).find((o) => o.payment_intent === paymentIntentId);
    if (!order || order.status === 'fulfilled') return false;
    const at = new Date().toISOString();
    order.status = 'fulfilled';
    order.fulfilled_at = at;
    this.state.fulfilments.push({ payment_intent: paymentIntentId, order: order.id, at });
    return true;
  }

  private save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state, null, 2));
    renameSync(tmp, this.file);
  }
}

function readState(file: string): State {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as State;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return { orders: {}, processedEvents: [], fulfilments: [] };
  }
}
