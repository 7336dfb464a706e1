import { ApiError } from '../../errors';
import { accountIdOf, type ActorOrAccount } from './actor';
import { PaymentModel, type PaymentRecord } from './paymentModel';
import { toPaymentIntentResource, type PaymentIntentResource } from './paymentSerializer';
import { isPaymentStatus, type PaymentStatus } from './paymentStates';
import { MOBILE_PATTERN } from '../../../generated/requestLimits';

/**
 * The dashboard's payment search and filters (GraphQL `paymentIntents(filter:)`; REST has no
 * equivalent). Newest first (`seq` descending) with the REST list's cursor, an intent id.
 *
 * `search` matches exactly one of four keys. The string alone cannot say which it is (a 9-digit number
 * may be a mobile or a reference number, a merchant reference may look like either), so each key it
 * could be is looked up on its own index and the answers are merged by `seq`: an `$or` would leave the
 * choice of plan to the database, and not every engine answers an `$or` from one index per branch.
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
const REFERENCE_NUMBER = /^\d{9}$/;
const PAYMENT_ID = /^pay_[A-Za-z0-9]+$/;

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

/** One condition per key the term could be, each served by an index of its own (paymentModel.ts). */
export function searchConditions(term: string): Record<string, unknown>[] {
  const keys: Record<string, unknown>[] = [{ merchant_reference: term }];
  if (PAYMENT_ID.test(term)) keys.push({ _id: term });
  const mobile = nationalMobile(term);
  if (mobile) keys.push({ 'customer.mobile': mobile });
  if (REFERENCE_NUMBER.test(term)) keys.push({ 'reference.number': term });
  return keys;
}

/** `9xxxxxxxx`, `2449xxxxxxxx` or `+2449xxxxxxxx` as stored (`9xxxxxxxx`); anything else: undefined. */
function nationalMobile(term: string): string | undefined {
  const national = term.replace(/^\+?244(?=\d{9}$)/, '');
  return MOBILE_PATTERN.test(national) ? national : undefined;
}
