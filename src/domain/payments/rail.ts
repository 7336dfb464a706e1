import type { Timer, TimerContext } from '../../platform/timers/timerService';
import { findByIdBatched } from '../../db/batching';
import type { TimerSpec } from '../events/outbox';
import { computeFee } from './fees';
import { PaymentModel, type PaymentRecord } from './paymentModel';
import { mutatePayment, type PaymentChange } from './paymentMutate';
import type { EventSink } from '../events/outbox';
import { PAYMENT_TRANSITIONS, planTransition, type FailureCode, type PaymentStatus, type PaymentTrigger } from './paymentStates';
import { EXPRESS_SCENARIOS, OTHER_EXPRESS_SCENARIO, type SandboxStep } from '../../../generated/sandboxScenarios';
import { nextSequence } from '../events/sequence';

/**
 * The sandbox express rail. The customer's mobile number picks a scenario (spec, "Sandbox scenarios");
 * the scenarios and their timings are the contract's (openapi.yaml x-sandbox-scenarios, generated into
 * generated/sandboxScenarios.ts), measured from the intent's creation. Each step is a durable timer; the
 * transition of a step carries the timer of the next step in the same atomic write (outbox
 * `pending_timers`). A step that finds the intent elsewhere (cancelled, say) does nothing.
 */
export interface RailStep {
  /** Milliseconds after creation. */
  at: number;
  trigger: PaymentTrigger;
  failureCode?: FailureCode;
}

/**
 * The contract names the status each step reaches; the state table says which express trigger takes the
 * intent there from the previous step's status. Exactly one does, or the module fails to load.
 */
function railSteps(steps: readonly SandboxStep[]): readonly RailStep[] {
  let from: PaymentStatus = 'PENDING';
  return Object.freeze(
    steps.map((step) => {
      const triggers = (Object.keys(PAYMENT_TRANSITIONS) as PaymentTrigger[]).filter((t) => {
        const rule = PAYMENT_TRANSITIONS[t];
        return rule.method === 'multicaixa_express' && rule.from.includes(from) && rule.to === step.status;
      });
      if (triggers.length !== 1) throw new Error(`x-sandbox-scenarios: no single express transition ${from} -> ${step.status}`);
      from = step.status as PaymentStatus;
      return { at: step.atSeconds * 1000, trigger: triggers[0]!, ...(step.failureCode ? { failureCode: step.failureCode as FailureCode } : {}) };
    }),
  );
}

export const RAIL_SCENARIOS: Readonly<Record<string, readonly RailStep[]>> = Object.freeze(
  Object.fromEntries(EXPRESS_SCENARIOS.map((s) => [s.mobile, railSteps(s.steps)])),
);

/** Any other valid mobile succeeds. */
export const DEFAULT_RAIL_SCENARIO: readonly RailStep[] = railSteps(OTHER_EXPRESS_SCENARIO.steps);

export function railScenario(mobile: string): readonly RailStep[] {
  return RAIL_SCENARIOS[mobile] ?? DEFAULT_RAIL_SCENARIO;
}

export const RAIL_TIMER_KIND = 'payment.rail_step';

/**
 * The timer of step `index` of the payment's scenario, or null after the last step. `version`: the
 * payment's version once the write that schedules the timer is applied.
 */
export function railStepTimer(p: Pick<PaymentRecord, '_id' | 'account_id' | 'created_at' | 'customer'>, index: number, version: number): TimerSpec | null {
  const step = railScenario(p.customer?.mobile ?? '')[index];
  if (!step) return null;
  return {
    accountId: p.account_id,
    kind: RAIL_TIMER_KIND,
    refId: p._id,
    dueAt: new Date(new Date(p.created_at).getTime() + step.at),
    // `emits`: how many events the step's transition emits, so that the step reserves their numbers
    // while it reads the payment (runRailStep) instead of after; `version`: to tell whether anything
    // changed the payment in between.
    payload: { step: index, emits: PAYMENT_TRANSITIONS[step.trigger].events.length, version },
    dedupeKey: `rail:${p._id}:${index}`,
  };
}

/** Fields set when a payment first reaches SUCCEEDED: the fee is computed once and frozen. */
export function succeededFields(p: PaymentRecord, now: Date): PaymentChange['set'] {
  if (p.fee !== null && p.fee !== undefined) return {};
  return { ...computeFee(p.payment_method, p.amount), succeeded_at: now };
}

/** The change a trigger makes to an intent, or null when the table does not allow it now. */
export function transitionChange(p: PaymentRecord, trigger: PaymentTrigger, now: Date, failureCode?: FailureCode): PaymentChange | null {
  const plan = planTransition(trigger, { status: p.status, method: p.payment_method });
  if (!plan.allowed) return null;
  const set: PaymentChange['set'] = { status: plan.to };
  if (plan.to === 'FAILED') set.failure_code = failureCode ?? null;
  if (plan.to === 'SUCCEEDED') Object.assign(set, succeededFields(p, now));
  return { set, events: plan.events.map((type) => ({ type })) };
}

/**
 * One step of a payment's rail: the payment is read once (batched with its batch's other steps) and handed to
 * mutatePayment. The step's event numbers are reserved during that read, one round trip less, and used only
 * if the payment is still at the version that scheduled the step; unused, they are a gap, which event numbers
 * allow. More: docs/decisions/notes/events-and-payments.md, "runRailStep".
 */
export async function runRailStep(sink: EventSink, timer: Timer, ctx: TimerContext): Promise<void> {
  const index = Number(timer.payload.step ?? 0);
  const emits = Number(timer.payload.emits ?? 0);
  const [p, firstSeq] = await Promise.all([
    findByIdBatched<PaymentRecord>(PaymentModel, timer.refId),
    emits > 0 ? nextSequence('events', emits) : undefined,
  ]);
  if (!p) return;
  const step = railScenario(p.customer?.mobile ?? '')[index];
  if (!step) return;
  await mutatePayment(
    sink,
    p._id,
    (cur, now) => {
      const change = transitionChange(cur, step.trigger, now, step.failureCode);
      if (!change) return null; // moved on (cancelled), or this step already ran
      const next = railStepTimer(cur, index + 1, cur.version + 1);
      return next ? { ...change, timers: [next] } : change;
    },
    { now: ctx.now, current: p, offsetMs: ctx.offsetMs, eventSeq: firstSeq === undefined ? undefined : { first: firstSeq, count: emits, version: Number(timer.payload.version) } },
  );
}
