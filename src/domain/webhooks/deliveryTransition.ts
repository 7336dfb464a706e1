import { updateIfMatchBatched, updateOneBatched } from '../../db/batching';
import { DELIVERY_STATES, DELIVERY_TRANSITIONS, type DeliveryState, type DeliveryTrigger } from './deliveryStates';
import { WebhookDeliveryModel, type WebhookDeliveryRecord } from './webhookDeliveryModel';

/**
 * The one place a delivery's state (or its lease, while PENDING) is written: a trigger of the table
 * (deliveryStates.ts) applied as one update whose filter is the trigger's `from` states and its guard,
 * so that a write racing another loses cleanly. The write's command is the caller's to choose, for what
 * it needs to learn: the claimed delivery, whether it moved, the state it replaced, or nothing.
 */
export interface DeliveryMove {
  /** The delivery; absent only for `lease_hand_back`, which moves every delivery its condition matches. */
  id?: string;
  /** The conditions of the rule's guard, one per field it names: a value read, or a bound ({ $lte: now }). */
  where?: Record<string, unknown>;
  /** What the write records whatever the transition (an attempt's outcome), set before the state. */
  record?: Record<string, unknown>;
  /** What changes with the transition, set after the state. */
  set?: Record<string, unknown>;
  /** Further operators of the same write (the attempt counted and logged). */
  inc?: Record<string, unknown>;
  push?: Record<string, unknown>;
}

/**
 * - `claim`: findOneAndUpdate, answering the delivery as written (null when the condition missed);
 * - `update`: updateOne, answering whether it moved;
 * - `ifMatch`: the same batched with the turn's other writes (updateIfMatchBatched);
 * - `previous`: findOneAndUpdate, answering the state it replaced (null when the delivery is gone);
 * - `many`: updateMany over every delivery the condition matches, answering how many moved;
 * - `recorded`: a pipeline update batched with the turn's other writes, answered by nobody: `record`
 *   always applies (its values are expressions), the state and `set` only where the condition holds.
 */
export type DeliveryWrite = 'claim' | 'update' | 'ifMatch' | 'previous' | 'many' | 'recorded';

export function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: 'claim'): Promise<WebhookDeliveryRecord | null>;
export function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: 'update' | 'ifMatch'): Promise<boolean>;
export function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: 'previous'): Promise<DeliveryState | null>;
export function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: 'many'): Promise<number>;
export function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: 'recorded'): Promise<void>;
export async function applyDeliveryTransition(trigger: DeliveryTrigger, move: DeliveryMove, write: DeliveryWrite): Promise<unknown> {
  const { filter, update } = deliveryTransitionWrite(trigger, move, write === 'recorded');
  switch (write) {
    case 'claim':
      return WebhookDeliveryModel.findOneAndUpdate(filter, update as Record<string, unknown>, { returnDocument: 'after', lean: true });
    case 'update':
      return (await WebhookDeliveryModel.updateOne(filter, update as Record<string, unknown>)).modifiedCount === 1;
    case 'ifMatch':
      return updateIfMatchBatched(WebhookDeliveryModel, filter as { _id: string }, update as Record<string, unknown>);
    case 'previous': {
      const before = await WebhookDeliveryModel.findOneAndUpdate(filter, update as Record<string, unknown>, { returnDocument: 'before', projection: { state: 1 }, lean: true });
      return before ? before.state : null;
    }
    case 'many':
      return (await WebhookDeliveryModel.updateMany(filter, update as Record<string, unknown>)).modifiedCount;
    case 'recorded':
      return updateOneBatched(WebhookDeliveryModel, filter, update);
  }
}

/**
 * The write of a transition: `{ _id, state, ...guard }` (the state left out when every state may move,
 * a lone state by value, several by $in), and `$set` of the record, the state (only when the trigger
 * changes it) and the rest. `conditional`: the filter names the delivery alone and the condition moves
 * into a pipeline update, each moving field `$cond`itional on it (values `$literal`, so that no string
 * is read as a field path). Exported for the unit test.
 */
export function deliveryTransitionWrite(
  trigger: DeliveryTrigger,
  move: DeliveryMove,
  conditional = false,
): { filter: Record<string, unknown>; update: Record<string, unknown> | Array<Record<string, unknown>> } {
  const rule = DELIVERY_TRANSITIONS[trigger];
  const where = move.where ?? {};
  const named = Object.keys(where);
  if (named.length !== rule.guard.length || rule.guard.some((f) => !named.includes(f))) {
    throw new Error(`delivery transition '${trigger}' conditions on ${rule.guard.join(', ') || 'nothing'}, not on ${named.join(', ') || 'nothing'}`);
  }
  if ((move.id === undefined) !== (trigger === 'lease_hand_back')) throw new Error(`delivery transition '${trigger}' ${move.id === undefined ? 'needs' : 'takes no'} delivery id`);
  const anyState = DELIVERY_STATES.every((s) => rule.from.includes(s));
  const changesState = rule.from.length !== 1 || rule.from[0] !== rule.to;
  const id = move.id === undefined ? {} : { _id: move.id };
  const guard = Object.fromEntries(rule.guard.map((f) => [f, where[f]]));
  const moving = { ...(changesState && { state: rule.to }), ...move.set };
  if (!conditional) {
    const state = anyState ? {} : { state: rule.from.length === 1 ? rule.from[0] : { $in: rule.from } };
    const update: Record<string, unknown> = { $set: { ...move.record, ...moving } };
    if (move.inc) update.$inc = move.inc;
    if (move.push) update.$push = move.push;
    return { filter: { ...id, ...state, ...guard }, update };
  }
  if (move.inc || move.push) throw new Error(`delivery transition '${trigger}': a pipeline update takes its counts in \`record\``);
  const conditions = [...(anyState ? [] : [{ $in: ['$state', rule.from] }]), ...Object.entries(guard).map(([f, c]) => expression(f, c))];
  const holds = conditions.length === 1 ? conditions[0] : { $and: conditions };
  const ifHolds = (field: string, value: unknown) => (conditions.length === 0 ? { $literal: value } : { $cond: [holds, { $literal: value }, `$${field}`] });
  return { filter: id, update: [{ $set: { ...move.record, ...Object.fromEntries(Object.entries(moving).map(([f, v]) => [f, ifHolds(f, v)])) } }] };
}

const COMPARISONS: readonly string[] = ['$eq', '$ne', '$lt', '$lte', '$gt', '$gte'];

/** A guard's query condition (`v` or `{ $op: v }`) as an aggregation expression on the stored field. */
function expression(field: string, condition: unknown): Record<string, unknown> {
  const ops = condition !== null && typeof condition === 'object' && !(condition instanceof Date) ? Object.entries(condition) : [['$eq', condition] as const];
  const parts = ops.map(([op, v]) => {
    if (!COMPARISONS.includes(op)) throw new Error(`delivery guard on ${field}: ${op} has no expression here`);
    return { [op]: [`$${field}`, v] };
  });
  return parts.length === 1 ? parts[0]! : { $and: parts };
}
