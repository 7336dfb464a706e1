import { describe, expect, it } from 'vitest';
import {
  DELIVERY_STATES,
  DELIVERY_TRANSITIONS,
  planDeliveryTransition,
  takesScheduledAttempts,
  type DeliveryState,
  type DeliveryTrigger,
} from '../../../src/domain/webhooks/deliveryStates';
import { deliveryTransitionWrite } from '../../../src/domain/webhooks/deliveryTransition';

const ANY = DELIVERY_STATES;

/** The delivery's transitions, row by row: [trigger, from, to]. */
const ROWS: Array<[DeliveryTrigger, DeliveryState, DeliveryState]> = [
  ['hold_release', 'PENDING', 'PENDING'],
  ['lease_take', 'PENDING', 'PENDING'],
  ['lease_extend', 'PENDING', 'PENDING'],
  ['lease_release', 'PENDING', 'PENDING'],
  ['lease_hand_back', 'PENDING', 'PENDING'],
  ['retry_scheduled', 'PENDING', 'RETRYING'],
  ['retry_scheduled', 'RETRYING', 'RETRYING'],
  ['attempt_delivered', 'PENDING', 'DELIVERED'],
  ['attempt_delivered', 'RETRYING', 'DELIVERED'],
  ['attempts_exhausted', 'PENDING', 'DEAD_LETTER'],
  ['attempts_exhausted', 'RETRYING', 'DEAD_LETTER'],
  ...ANY.map((s): [DeliveryTrigger, DeliveryState, DeliveryState] => ['resend_delivered', s, 'DELIVERED']),
  ...ANY.map((s): [DeliveryTrigger, DeliveryState, DeliveryState] => ['copy_accepted', s, 'DELIVERED']),
  ...ANY.map((s): [DeliveryTrigger, DeliveryState, DeliveryState] => ['copy_refused', s, 'DEAD_LETTER']),
];

const TRIGGERS = Object.keys(DELIVERY_TRANSITIONS) as DeliveryTrigger[];

describe('delivery state table', () => {
  it.each(ROWS)('%s from %s goes to %s', (trigger, from, to) => {
    expect(planDeliveryTransition(trigger, from)).toEqual({ allowed: true, to });
  });

  it('refuses every (trigger, state) pair the rows do not list', () => {
    const listed = new Set(ROWS.map(([t, from]) => `${t}|${from}`));
    let refused = 0;
    for (const trigger of TRIGGERS) {
      for (const state of DELIVERY_STATES) {
        const plan = planDeliveryTransition(trigger, state);
        expect(plan.allowed, `${trigger} from ${state}`).toBe(listed.has(`${trigger}|${state}`));
        if (!plan.allowed) {
          expect(plan.reason).toBe(`delivery is ${state}`);
          refused++;
        }
      }
    }
    // The lease triggers from the three other states, the scheduled outcomes from the two final ones.
    expect(refused).toBe(5 * 3 + 3 * 2);
    expect(new Set(ROWS.map(([t]) => t))).toEqual(new Set(TRIGGERS));
  });

  it('leaves a final state only by an attempt outside the schedule (or a chaos copy’s own answer)', () => {
    for (const state of ['DELIVERED', 'DEAD_LETTER'] as const) {
      const leaving = TRIGGERS.filter((t) => planDeliveryTransition(t, state).allowed);
      expect(leaving.sort()).toEqual(['copy_accepted', 'copy_refused', 'resend_delivered']);
    }
  });

  it('moves only the lease while PENDING, and never back to PENDING from elsewhere', () => {
    for (const trigger of TRIGGERS) {
      const rule = DELIVERY_TRANSITIONS[trigger];
      if (rule.to === 'PENDING') expect(rule.from, trigger).toEqual(['PENDING']);
    }
  });

  it('takes scheduled attempts in the states the scheduled outcomes move from', () => {
    for (const state of DELIVERY_STATES) {
      for (const trigger of ['retry_scheduled', 'attempt_delivered', 'attempts_exhausted'] as const) {
        expect(planDeliveryTransition(trigger, state).allowed, `${trigger} from ${state}`).toBe(takesScheduledAttempts(state));
      }
    }
  });
});

describe('a delivery transition as one conditional write', () => {
  it('filters on the delivery, its from states and its guard, in that order', () => {
    const leased = deliveryTransitionWrite('lease_extend', { id: 'whd_1', where: { lease_until: 5 }, set: { lease_until: 9 } });
    expect(leased).toEqual({ filter: { _id: 'whd_1', state: 'PENDING', lease_until: 5 }, update: { $set: { lease_until: 9 } } });
    expect(Object.keys(leased.filter)).toEqual(['_id', 'state', 'lease_until']);

    const final = deliveryTransitionWrite('attempt_delivered', {
      id: 'whd_1',
      where: { step: { $lt: 2 } },
      record: { last_status: 200 },
      set: { step: 2 },
      inc: { attempts: 1 },
      push: { attempt_log: 'x' },
    });
    expect(final).toEqual({
      filter: { _id: 'whd_1', state: { $in: ['PENDING', 'RETRYING'] }, step: { $lt: 2 } },
      update: { $set: { last_status: 200, state: 'DELIVERED', step: 2 }, $inc: { attempts: 1 }, $push: { attempt_log: 'x' } },
    });
    // The attempt's record first, then the state, then what moves with it: the order the writes had.
    expect(Object.keys((final.update as { $set: object }).$set)).toEqual(['last_status', 'state', 'step']);
  });

  it('names no state when every state may move', () => {
    expect(deliveryTransitionWrite('resend_delivered', { id: 'whd_1', set: { lease_until: 0 } })).toEqual({
      filter: { _id: 'whd_1' },
      update: { $set: { state: 'DELIVERED', lease_until: 0 } },
    });
  });

  it('hands back every lease its condition matches, with no delivery named', () => {
    const where = { lease_until: { $gt: 1 }, lease_owner: 'gw', held: { $ne: true } };
    expect(deliveryTransitionWrite('lease_hand_back', { where, set: { lease_until: 1, lease_owner: null } }).filter).toEqual({ state: 'PENDING', ...where });
    expect(() => deliveryTransitionWrite('lease_take', { where: { lease_until: { $lte: 1 } } })).toThrow(/needs delivery id/);
  });

  it('refuses a write whose conditions are not its trigger’s guard', () => {
    expect(() => deliveryTransitionWrite('lease_extend', { id: 'whd_1' })).toThrow(/conditions on lease_until, not on nothing/);
    expect(() => deliveryTransitionWrite('hold_release', { id: 'whd_1', where: { held: true, step: 1 } })).toThrow(/conditions on held/);
  });

  it('as a pipeline, records always and moves only where the condition holds', () => {
    const { filter, update } = deliveryTransitionWrite(
      'retry_scheduled',
      { id: 'whd_1', where: { step: { $lt: 2 } }, record: { attempts: { $add: ['$attempts', 1] } }, set: { step: 2, lease_until: 0 } },
      true,
    );
    const holds = { $and: [{ $in: ['$state', ['PENDING', 'RETRYING']] }, { $lt: ['$step', 2] }] };
    expect(filter).toEqual({ _id: 'whd_1' });
    expect(update).toEqual([
      {
        $set: {
          attempts: { $add: ['$attempts', 1] },
          state: { $cond: [holds, { $literal: 'RETRYING' }, '$state'] },
          step: { $cond: [holds, { $literal: 2 }, '$step'] },
          lease_until: { $cond: [holds, { $literal: 0 }, '$lease_until'] },
        },
      },
    ]);
  });
});
