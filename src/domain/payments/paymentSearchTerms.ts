/**
 * What a dashboard search term can mean, shared by the server's query (paymentSearch.ts) and the dashboard's
 * live lists; pure. Prefixes have a minimum length and a mobile is whole, so that no term reads most of an
 * account's payments. More: docs/decisions/notes/events-and-payments.md, "Search terms".
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
