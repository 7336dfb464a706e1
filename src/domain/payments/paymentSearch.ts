import { ApiError } from '../../errors';
import { accountIdOf, type ActorOrAccount } from './actor';
import { PaymentModel, type PaymentRecord } from './paymentModel';
import { toPaymentIntentResource, type PaymentIntentResource } from './paymentSerializer';
import { isPaymentStatus, type PaymentStatus } from './paymentStates';
import { searchKeys } from './paymentSearchTerms';

/**
 * The dashboard's payment search and filters (GraphQL `paymentIntents(filter:)`), newest first. A term may be
 * any of four keys, so each is looked up on its own index and the answers merged by `seq`: an `$or` would
 * leave the plan to the database, and not every engine answers one from one index per branch. More:
 * docs/decisions/notes/events-and-payments.md, "Payment search".
 */
export interface PaymentSearch {
  search?: string | null;
  statuses?: readonly string[] | null;
  /** A method code as REST spells it (`multicaixa_express`). */
  paymentMethod?: string | null;
  /** ISO 8601, inclusive. */
  createdFrom?: string | null;
  /** ISO 8601, exclusive. */
  createdTo?: string | null;
}

export const SEARCH_MAX_LENGTH = 128;

export async function searchPaymentIntents(
  actor: ActorOrAccount,
  search: PaymentSearch,
  page: { limit: number; startingAfter?: string | null },
): Promise<PaymentIntentResource[]> {
  const accountId = accountIdOf(actor);
  const term = (search.search ?? '').trim();
  if (term.length > SEARCH_MAX_LENGTH) throw ApiError.invalid(`Invalid field 'search': at most ${SEARCH_MAX_LENGTH} characters`);
  const filter: Record<string, unknown> = { account_id: accountId, ...filterConditions(search) };
  if (page.startingAfter) {
    const cursor = await PaymentModel.findOne({ _id: page.startingAfter, account_id: accountId }, { seq: 1 }).lean();
    if (!cursor) throw ApiError.invalid(`Invalid argument 'after': no such payment intent '${page.startingAfter}'`);
    filter.seq = { $lt: cursor.seq };
  }
  const keys = term === '' ? [{}] : searchConditions(term);
  const found = await Promise.all(
    keys.map((key) => PaymentModel.find({ ...filter, ...key }, { pending_events: 0 }).sort({ seq: -1 }).limit(page.limit).lean<PaymentRecord[]>()),
  );
  const merged = new Map<string, PaymentRecord>();
  for (const doc of found.flat()) merged.set(doc._id, doc);
  return [...merged.values()]
    .sort((a, b) => b.seq - a.seq)
    .slice(0, page.limit)
    .map(toPaymentIntentResource);
}

/** The conditions of the filters other than `search`; invalid input is `invalid_request`. */
function filterConditions(search: PaymentSearch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (search.statuses) {
    const unknown = search.statuses.find((s) => !isPaymentStatus(s));
    if (unknown !== undefined) throw ApiError.invalid(`Invalid field 'status': unknown status '${unknown}'`);
    out.status = { $in: search.statuses as PaymentStatus[] };
  }
  if (search.paymentMethod) out.payment_method = search.paymentMethod;
  const from = search.createdFrom ? parseTime('createdFrom', search.createdFrom) : undefined;
  const to = search.createdTo ? parseTime('createdTo', search.createdTo) : undefined;
  if (from && to && from.getTime() > to.getTime()) throw ApiError.invalid("Invalid filter: 'createdFrom' is after 'createdTo'");
  if (from || to) out.created_at = { ...(from && { $gte: from }), ...(to && { $lt: to }) };
  return out;
}

function parseTime(field: string, value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw ApiError.invalid(`Invalid field '${field}': an ISO 8601 time`);
  return date;
}

/**
 * One condition per key the term could be, each served by an index of its own (paymentModel.ts). A
 * prefix is a range (`prefix` ≤ key < `prefix\uffff`), which an index answers as a walk of that range
 * on any engine, where an anchored regular expression is left to the engine's planner.
 */
export function searchConditions(term: string): Record<string, unknown>[] {
  const keys = searchKeys(term);
  // The exact spelling too: intents created before the folded copy existed have only that.
  const conditions: Record<string, unknown>[] = [{ merchant_reference: term }, { merchant_reference_folded: keys.merchantReference }];
  if (keys.idPrefix) conditions.push({ _id: startsWith(keys.idPrefix) });
  if (keys.mobile) conditions.push({ 'customer.mobile': keys.mobile });
  if (keys.referencePrefix) conditions.push({ 'reference.number': startsWith(keys.referencePrefix) });
  return conditions;
}

/** The keys that start with `prefix`; ids and reference numbers are ASCII, below U+FFFF. */
const startsWith = (prefix: string) => ({ $gte: prefix, $lt: `${prefix}\uffff` });
