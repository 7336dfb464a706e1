import { describe, expect, it } from 'vitest';
import { CombinedError } from 'urql';
import { GraphQLError } from 'graphql';
import { failureOf, failureWords, withLabels } from '../../src/dashboard/app/errorWords';

/** Issue 58: the dashboard's errors in words, with the labels shown on screen, never a code. */
const gqlError = (code: string, message: string, response?: Response) =>
  new CombinedError({ graphQLErrors: [new GraphQLError(message, { extensions: { code } })], response });
const words = (error: CombinedError | string, labels?: Record<string, string>) => failureWords(failureOf(error), labels);

describe('the dashboard’s errors in words', () => {
  it('names arguments by their label on screen', () => {
    expect(words(gqlError('invalid_request', "Invalid filter: 'createdFrom' is after 'createdTo'"))).toBe("Invalid filter: 'Created from' is after 'Created to'.");
    expect(withLabels('Variable "$merchantReference" got invalid value 3')).toBe("Variable 'Merchant reference' got invalid value 3");
    // A view's own label wins; a bare lower-case word in a sentence stays a word.
    expect(withLabels("'amount' must be positive; the amount is too small", { amount: 'Refund amount' })).toBe("'Refund amount' must be positive; the amount is too small");
  });

  it('says a rate-limit refusal in words, with the wait of its Retry-After', () => {
    const response = new Response('{}', { status: 429, headers: { 'Retry-After': '17' } });
    const text = words(gqlError('rate_limit_exceeded', 'Too many requests: at most 600 per minute for this dashboard session. Retry in 17 s.', response));
    expect(text).toBe('The dashboard is making too many requests; try again in 17 s.');
    // Over WebSocket, without a header: the message's wait.
    expect(words(gqlError('rate_limit_exceeded', 'Too many requests: at most 600 per minute. Retry in 9 s.'))).toMatch(/in 9 s\.$/);
  });

  it('never shows a code', () => {
    const cases: Array<CombinedError | string> = [
      gqlError('authentication_failed', 'Invalid API key'),
      gqlError('internal_error', 'An internal error occurred.'),
      gqlError('permission_denied', "This key lacks the 'payments:write' permission."),
      'resource_not_found: no payment pi_1 in this account',
      new CombinedError({ networkError: new Error('Failed to fetch') }),
    ];
    const texts = cases.map((c) => words(c));
    expect(texts).toEqual([
      'Your dashboard session has ended: sign in again.',
      'Something went wrong on the gateway. Try again in a moment.',
      "The key you signed in with is not allowed to do this. This key lacks the 'payments:write' permission.",
      'Not found. No payment pi_1 in this account.',
      'The gateway could not be reached. Check the connection and try again.',
    ]);
    for (const t of texts) expect(t).not.toMatch(/\b[a-z]+_[a-z_]+\b/);
  });
});
