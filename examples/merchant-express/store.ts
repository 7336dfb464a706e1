import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Order {
  id: string;
  amount: number;
  payment_intent: string;
  status: OrderStatus;
  fulfilled_at: string | null;
  /** The `sequence` of the last event applied for its payment: an older one arriving late is dropped. */
  last_sequence?: number;
}

export type OrderStatus = 'awaiting_payment' | 'fulfilled' | 'payment_failed' | 'expired' | 'cancelled';

/** What each final payment event makes of its order. */
const OUTCOME = {
  'payment.succeeded': 'fulfilled',
  'payment.failed': 'payment_failed',
  'payment.expired': 'expired',
  'payment.cancelled': 'cancelled',
} as const satisfies Record<string, OrderStatus>;
export type HandledEvent = keyof typeof OUTCOME;
export const HANDLED_EVENTS = Object.keys(OUTCOME) as HandledEvent[];

interface State {
  orders: Record<string, Order>;
  /** Service-Event-Id of every delivery handled: a redelivery of one of them changes nothing. */
  processedEvents: string[];
  /** One line per fulfilment ever made; the test checks it holds one per payment. */
  fulfilments: Array<{ payment_intent: string; order: string; at: string }>;
  /** One line per order that reached a final state; the test checks one per order. */
  outcomes?: Array<{ order: string; status: OrderStatus; at: string }>;
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

  outcomes(): NonNullable<State['outcomes']> {
    return [...(this.state.outcomes ?? [])];
  }

  /**
   * Applies a payment event to its order: dropped when its `sequence` is not above the last one applied
   * for that payment (a late, reordered delivery), or when the order is final already. So an order ends
   * in one final state, once, whatever order and how many times the events arrive; a paid order is
   * fulfilled once per payment.
   */
  applyPaymentEvent(type: string, paymentIntentId: string, sequence: number): boolean {
    const status: OrderStatus | undefined = OUTCOME[type as HandledEvent];
    const order = Object.values(this.state.orders).find((o) => o.payment_intent === paymentIntentId);
    if (!status || !order || sequence <= (order.last_sequence ?? 0)) return false;
    order.last_sequence = sequence;
    if (order.status !== 'awaiting_payment') return false;
    const at = new Date().toISOString();
    order.status = status;
    (this.state.outcomes ??= []).push({ order: order.id, status, at });
    if (status === 'fulfilled') {
      order.fulfilled_at = at;
      this.state.fulfilments.push({ payment_intent: paymentIntentId, order: order.id, at });
    }
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
