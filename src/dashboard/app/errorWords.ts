import type { CombinedError } from 'urql';

/**
 * What the dashboard says when the gateway refuses or fails: a sentence for a person, never the error's
 * code, and the fields of a form named by their label on screen, never by their GraphQL argument name.
 */

/**
 * GraphQL argument (and input field) names as the dashboard's forms and filters label them. A view whose
 * label differs passes its own to ErrorAlert (`labels`).
 */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  amount: 'Amount',
  minAmount: 'Minimum amount',
  maxAmount: 'Maximum amount',
  createdFrom: 'Created from',
  createdTo: 'Created to',
  merchantReference: 'Merchant reference',
  paymentMethod: 'Method',
  mobile: 'Mobile number',
  phone: 'Mobile number',
  search: 'Search',
  status: 'Status',
  description: 'Description',
  expiresIn: 'Expires in',
  successUrl: 'Success URL',
  cancelUrl: 'Cancel URL',
  url: 'URL',
  name: 'Name',
  eventType: 'Event type',
  eventTypes: 'Events',
  objectId: 'Object',
  permissions: 'Permissions',
  offsetSeconds: 'Advance by',
  seconds: 'Advance by',
  delayMs: 'Delay',
  first: 'Rows per page',
  after: 'Page',
};

/** Error codes and what they mean to a person; the gateway's own message follows where it says more. */
const SENTENCES: Readonly<Record<string, string>> = {
  authentication_failed: 'Your dashboard session has ended: sign in again.',
  permission_denied: 'The key you signed in with is not allowed to do this.',
  resource_not_found: 'Not found.',
  internal_error: 'Something went wrong on the gateway. Try again in a moment.',
  service_unavailable: 'The gateway is unavailable for a moment. Try again shortly.',
  maintenance: 'The gateway is under maintenance. Try again later.',
  payload_too_large: 'What was sent is too large.',
  idempotency_conflict: 'This was already sent with other values.',
  payment_already_processed: 'This payment has already been processed.',
  method_disabled: 'This payment method is turned off for the account.',
  payment_link_inactive: 'This payment link is no longer active.',
  invalid_phone_number: 'The mobile number is not valid.',
};

/** Codes whose own sentence says it all: the gateway's message (which may name internals) is not added. */
const SENTENCE_ONLY = new Set(['internal_error', 'service_unavailable', 'maintenance', 'authentication_failed']);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The message with each argument name replaced by its label in quotes: `'createdFrom'`, `"$createdFrom"`
 * and a bare camelCase `createdFrom` all become `'Created from'`. A bare lower-case word (`amount`) is left
 * as it is: in a sentence it is a word, not a name.
 */
export function withLabels(message: string, labels: Readonly<Record<string, string>> = {}): string {
  const all = { ...FIELD_LABELS, ...labels };
  let out = message;
  for (const [name, label] of Object.entries(all)) {
    out = out.replace(new RegExp(`(['"\`])\\$?${escape(name)}\\1`, 'g'), `'${label}'`).replace(new RegExp(`\\$${escape(name)}\\b`, 'g'), `'${label}'`);
    if (/[A-Z]/.test(name)) out = out.replace(new RegExp(`(?<![\\w'])${escape(name)}\\b(?!')`, 'g'), `'${label}'`);
  }
  return out;
}

/** A message's first letter upper-case and a full stop at its end. */
function sentence(text: string): string {
  const t = text.trim();
  if (!t) return t;
  const upper = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?…)]$/.test(upper) ? upper : `${upper}.`;
}

/** What went wrong, as the dashboard's views hand it to ErrorAlert: urql's error, or a `code: message` string. */
export interface Failure {
  code: string | undefined;
  message: string;
  /** Seconds to wait before trying again (a rate-limit refusal's Retry-After). */
  retryAfter?: number;
  network?: boolean;
  httpStatus?: number;
}

export function failureOf(error: CombinedError | string): Failure {
  if (typeof error === 'string') {
    // A view's own `code: message` (e.g. "resource_not_found: no payment … in this account").
    const m = /^([a-z_]+): ([\s\S]*)$/.exec(error);
    return m ? { code: m[1], message: m[2]! } : { code: undefined, message: error };
  }
  const response = error.response as Response | undefined;
  const httpStatus = typeof response?.status === 'number' ? response.status : undefined;
  const gql = error.graphQLErrors[0];
  const retryHeader = response?.headers?.get?.('retry-after');
  if (gql) {
    const code = typeof gql.extensions?.code === 'string' ? gql.extensions.code : undefined;
    // Over WebSocket there is no header: the message says "Retry in N s".
    const retry = Number(retryHeader ?? /Retry in (\d+) s/.exec(gql.message)?.[1]);
    return { code, message: gql.message, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : undefined, httpStatus };
  }
  if (error.networkError) return { code: undefined, message: error.networkError.message, network: true, httpStatus };
  return { code: undefined, message: error.message.replace(/^\[(GraphQL|Network)\] /, '') };
}

export const isRateLimited = (f: Failure) => f.code === 'rate_limit_exceeded' || f.httpStatus === 429;

/** The rate-limit refusal's words: the dashboard tries a load again by itself (retryExchange), not a change. */
export function rateLimitWords(seconds: number | undefined, retrying: boolean): string {
  const when = seconds === undefined ? 'in a moment' : seconds <= 0 ? 'now' : `in ${seconds} s`;
  return retrying
    ? `The dashboard is making too many requests; it will try again ${when}.`
    : `The dashboard is making too many requests; try again ${when}.`;
}

/** A failure in words for a person: never its code, its fields by their labels. */
export function failureWords(f: Failure, labels?: Readonly<Record<string, string>>): string {
  if (isRateLimited(f)) return rateLimitWords(f.retryAfter, false);
  if (f.network) {
    return f.httpStatus && f.httpStatus >= 500
      ? `The gateway could not answer (HTTP ${f.httpStatus}). Try again in a moment.`
      : 'The gateway could not be reached. Check the connection and try again.';
  }
  const known = f.code ? SENTENCES[f.code] : undefined;
  const detail = sentence(withLabels(f.message, labels));
  if (!known) return detail || 'Something went wrong. Try again.';
  if (SENTENCE_ONLY.has(f.code!) || !detail) return known;
  return `${known} ${detail}`;
}
