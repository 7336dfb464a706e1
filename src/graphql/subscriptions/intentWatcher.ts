import { logger } from '../../logger';
import { PaymentModel, type PaymentRecord } from '../../domain/payments/payment.model';
import { toPaymentIntentResource, type PaymentIntentResource } from '../../domain/payments/payment.serializer';
import { PAYMENT_TRANSITIONS, type PaymentStatus } from '../../domain/payments/payment.states';

/**
 * Some changes of an intent emit no event (the state table's transitions with `events: []`: the rail
 * starting work, PENDING → PROCESSING), so they never reach the event bus. `paymentIntentUpdated`
 * subscribers still get them: while an intent sits in a state such a transition starts from, it is
 * watched here. One poller per process reads every watched intent in one query per tick, from the
 * database, so a change made by any gateway process is seen.
 */
const SILENT_RULES = Object.values(PAYMENT_TRANSITIONS).filter((rule) => rule.events.length === 0);
/** States a silent transition starts from: watch intents while they are in one. */
export const SILENT_SOURCES: ReadonlySet<string> = new Set(SILENT_RULES.flatMap((rule) => rule.from));
/** States reached by a silent transition: the poller reports these. */
export const SILENT_TARGETS: ReadonlySet<string> = new Set(
  SILENT_RULES.flatMap((rule): PaymentStatus[] => (typeof rule.to === 'string' ? [rule.to] : [rule.to.partial, rule.to.whole])),
);

export const WATCH_POLL_MS = 500;
const BATCH = 500;

interface Watcher {
  accountId: string;
  onIntent: (intent: PaymentIntentResource) => void;
}

const watched = new Map<string, Set<Watcher>>();
let timer: NodeJS.Timeout | null = null;
let running: Promise<void> | null = null;

/** Calls `onIntent` with the stored intent every tick until the returned function is called. */
export function watchIntent(accountId: string, paymentId: string, onIntent: (intent: PaymentIntentResource) => void): () => void {
  const watcher: Watcher = { accountId, onIntent };
  let set = watched.get(paymentId);
  if (!set) watched.set(paymentId, (set = new Set()));
  set.add(watcher);
  ensureTimer();
  return () => {
    const current = watched.get(paymentId);
    current?.delete(watcher);
    if (current && current.size === 0) watched.delete(paymentId);
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

function ensureTimer(): void {
  if (timer) return;
  timer = setInterval(() => {
    if (running) return;
    running = pollOnce()
      .catch((err: unknown) => logger.warn({ err }, 'graphql intent watcher poll failed'))
      .finally(() => {
        running = null;
      });
  }, WATCH_POLL_MS);
  timer.unref();
}

async function pollOnce(): Promise<void> {
  const ids = [...watched.keys()];
  for (let i = 0; i < ids.length; i += BATCH) {
    const docs = await PaymentModel.find({ _id: { $in: ids.slice(i, i + BATCH) } }, { pending_events: 0, refunds: 0 }).lean<PaymentRecord[]>();
    for (const doc of docs) {
      const intent = toPaymentIntentResource(doc);
      for (const w of [...(watched.get(doc._id) ?? [])]) {
        if (w.accountId === doc.account_id) w.onIntent(intent);
      }
    }
  }
}

/** Stops polling (gateway shutdown); watchers left behind are released by their subscriptions. */
export async function stopIntentWatcher(): Promise<void> {
  if (timer) clearInterval(timer);
  timer = null;
  if (running) await running;
}
