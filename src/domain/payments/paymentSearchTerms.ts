/**
 * What a dashboard search term can mean, shared by the server's query (paymentSearch.ts) and the
 * dashboard, which decides with the same rules whether a payment that arrives live belongs in a searched
 * list. Pure: no database, no Node.
 *
 * A term is looked up as each key it could be (the contract's "Sandbox dashboard: a data product"): a
 * merchant reference (exact, ignoring case), a prefix of an intent id (`pay_` and at least 3 more
 * characters) or of a reference number (at least 3 digits), and a customer's mobile (9 digits, with or
 * without `+244`). Shorter prefixes would match most of an account's payments and read them all. A
 * mobile is whole: the sandbox's scenario numbers share their first digits, so a prefix of one would read
 * every payment made with them before the newest could be told.
 */
import { MOBILE_PATTERN } from '../../../generated/requestLimits';

export const MIN_PREFIX = 3;
// Literals (the lint forbids module-level RegExp instances); the {3,} is MIN_PREFIX.
const ID_PREFIX = /^pay_[A-Za-z0-9]{3,}$/;
const REFERENCE_PREFIX = /^\d{3,9}$/;

export interface SearchKeys {
  /** Lower case: compared with the stored lower-case copy. */
  merchantReference: string;
  idPrefix?: string;
  /** National digits (`9xxxxxxxx`), as mobiles are stored. */
  mobile?: string;
  referencePrefix?: string;
}

export function searchKeys(term: string): SearchKeys {
  const keys: SearchKeys = { merchantReference: term.toLowerCase() };
  if (ID_PREFIX.test(term)) keys.idPrefix = term;
  const national = term.replace(/^\+?244(?=\d{9}$)/, '');
  if (MOBILE_PATTERN.test(national)) keys.mobile = national;
  if (REFERENCE_PREFIX.test(term)) keys.referencePrefix = term;
  return keys;
}

/** What a payment is searched by; null where it has no such key. */
export interface SearchedPayment {
  id: string;
  merchantReference: string | null | undefined;
  mobile: string | null | undefined;
  referenceNumber: string | null | undefined;
}

/** Whether `term` finds `p`, by the rules the server's search applies. */
export function matchesSearch(p: SearchedPayment, term: string): boolean {
  const keys = searchKeys(term);
  const starts = (value: string | null | undefined, prefix: string | undefined) => prefix !== undefined && value != null && value.startsWith(prefix);
  return (
    p.merchantReference?.toLowerCase() === keys.merchantReference ||
    starts(p.id, keys.idPrefix) ||
    (keys.mobile !== undefined && p.mobile === keys.mobile) ||
    starts(p.referenceNumber, keys.referencePrefix)
  );
}
