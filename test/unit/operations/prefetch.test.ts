import { describe, expect, it } from 'vitest';
import { startedFor, type StartedRead } from '../../../src/operations/prefetch';

/**
 * The read admission starts beside the count rides on the request to execute; a handler gets it only for
 * the operation and the parameters it was started for (a GraphQL request may run the same operation for
 * another id, or another operation).
 */
describe('startedFor', () => {
  const read = Promise.resolve(null);
  const started: StartedRead = { operationId: 'getPaymentIntent', params: { id: 'pay_a' }, read };

  it('answers the read for its operation and parameters', () => {
    expect(startedFor(started, 'getPaymentIntent', { id: 'pay_a' })).toBe(read);
  });

  it('answers nothing for another id, another operation, or no read', () => {
    expect(startedFor(started, 'getPaymentIntent', { id: 'pay_b' })).toBeUndefined();
    expect(startedFor(started, 'getPaymentIntent', {})).toBeUndefined();
    expect(startedFor(started, 'getPaymentIntent', undefined)).toBeUndefined();
    expect(startedFor(started, 'cancelPaymentIntent', { id: 'pay_a' })).toBeUndefined();
    expect(startedFor(undefined, 'getPaymentIntent', { id: 'pay_a' })).toBeUndefined();
  });
});
