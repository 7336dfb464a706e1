/**
 * The webhook delivery's state machine, as data (as paymentStates.ts is the payment's). Every change of
 * a delivery's state, and of its lease while it is PENDING, is one trigger of this table, written by
 * `applyDeliveryTransition` (deliveryTransition.ts) as one update conditional on the trigger's `from`
 * states and its `guard`, so that a race loses cleanly instead of writing twice.
 *
 * PENDING covers both "waiting" and "in flight": `lease_until` (real ms) says whether someone is
 * attempting it (webhookDeliveryModel.ts), so the lease triggers keep the state and move the lease.
 */
export const DELIVERY_STATES = ['PENDING', 'RETRYING', 'DELIVERED', 'DEAD_LETTER'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * Where deliveries start: a genuine one PENDING, leased to the gateway that writes it (or held by chaos,
 * chaosHold.ts); a chaos copy DEAD_LETTER, so that no sweeper or retry ever sends it as genuine.
 */
export const INITIAL_STATE = { genuine: 'PENDING', copy: 'DEAD_LETTER' } as const satisfies Record<string, DeliveryState>;

export type DeliveryTrigger =
  | 'hold_release' // PENDING held by chaos -> PENDING leased to whoever ends the hold
  | 'lease_take' // PENDING, lease lapsed or released -> PENDING leased to the sweeper
  | 'lease_extend' // PENDING -> PENDING, its lease extended by its holder
  | 'lease_release' // PENDING -> PENDING, its lease released by its holder (a spill)
  | 'lease_hand_back' // PENDING leased by a stopping gateway -> PENDING, lease released
  | 'retry_scheduled' // PENDING|RETRYING -> RETRYING (a scheduled attempt failed, another is due)
  | 'attempt_delivered' // PENDING|RETRYING -> DELIVERED (a scheduled attempt got a 2xx)
  | 'attempts_exhausted' // PENDING|RETRYING -> DEAD_LETTER (the last scheduled attempt failed)
  | 'resend_delivered' // any -> DELIVERED (a manual retry or a recovery got a 2xx)
  | 'copy_accepted' // a chaos copy's one attempt got a 2xx -> DELIVERED
  | 'copy_refused'; // a chaos copy's one attempt failed -> DEAD_LETTER

/** The fields a trigger's write conditions on besides `_id` and the state, with the values its caller read. */
export type DeliveryGuardField = 'held' | 'lease_until' | 'lease_owner' | 'step';

export interface DeliveryTransitionRule {
  from: readonly DeliveryState[];
  to: DeliveryState;
  /** The write's other conditions, in the order the filter names them (an index's prefix). */
  guard: readonly DeliveryGuardField[];
}

/** The states a scheduled attempt's outcome moves a delivery from: those in which its retry timers still act. */
const SCHEDULED: readonly DeliveryState[] = ['PENDING', 'RETRYING'];

export const DELIVERY_TRANSITIONS: Readonly<Record<DeliveryTrigger, DeliveryTransitionRule>> = Object.freeze({
  // Only a delivery still held: not one released already by its timer, its reorder or the sweeper.
  hold_release: { from: ['PENDING'], to: 'PENDING', guard: ['held'] },
  // Only a lease that has lapsed (or was released) when the sweeper looked.
  lease_take: { from: ['PENDING'], to: 'PENDING', guard: ['lease_until'] },
  // Only the lease its holder read: one taken over meanwhile is not extended nor released.
  lease_extend: { from: ['PENDING'], to: 'PENDING', guard: ['lease_until'] },
  lease_release: { from: ['PENDING'], to: 'PENDING', guard: ['lease_until'] },
  // Only leases still running, of the stopping gateway's owner stamp, not held by chaos (a hold is part of the first attempt).
  lease_hand_back: { from: ['PENDING'], to: 'PENDING', guard: ['lease_until', 'lease_owner', 'held'] },
  // A scheduled attempt's outcome applies only if no later step (or a success) was recorded meanwhile.
  retry_scheduled: { from: SCHEDULED, to: 'RETRYING', guard: ['step'] },
  attempt_delivered: { from: SCHEDULED, to: 'DELIVERED', guard: ['step'] },
  attempts_exhausted: { from: SCHEDULED, to: 'DEAD_LETTER', guard: ['step'] },
  // An attempt outside the schedule that succeeds delivers, whatever the state.
  resend_delivered: { from: DELIVERY_STATES, to: 'DELIVERED', guard: [] },
  // A copy is its sender's alone (written a moment before, never retried, swept or recovered): its
  // answer is recorded over whatever state it is in.
  copy_accepted: { from: DELIVERY_STATES, to: 'DELIVERED', guard: [] },
  copy_refused: { from: DELIVERY_STATES, to: 'DEAD_LETTER', guard: [] },
});

export type DeliveryTransitionPlan = { allowed: true; to: DeliveryState } | { allowed: false; reason: string };

export function planDeliveryTransition(trigger: DeliveryTrigger, state: DeliveryState): DeliveryTransitionPlan {
  const rule = DELIVERY_TRANSITIONS[trigger];
  if (!rule.from.includes(state)) return { allowed: false, reason: `delivery is ${state}` };
  return { allowed: true, to: rule.to };
}

/** Whether a delivery in `state` still takes scheduled attempts (a retry timer that finds it otherwise does nothing). */
export function takesScheduledAttempts(state: DeliveryState): boolean {
  return SCHEDULED.includes(state);
}

