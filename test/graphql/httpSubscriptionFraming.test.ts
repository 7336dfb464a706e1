// The two framings of subscriptions over HTTP, byte for byte, and which Accept header picks which.
import { describe, expect, it } from 'vitest';
import { print } from 'graphql-sse';
import { framingOf } from '../../src/graphql/httpSubscriptions/run';
import { multipartFraming } from '../../src/graphql/httpSubscriptions/multipartFraming';
import { sseFraming } from '../../src/graphql/httpSubscriptions/sseFraming';

describe('subscription framings', () => {
  it("writes a graphql-sse `next` exactly as graphql-sse's print does", () => {
    const result = { data: { paymentIntentUpdated: { snapshot: true, text: 'a\nb "c"' } } };
    expect(sseFraming.next(JSON.stringify(result))).toBe(print({ event: 'next', data: result as never }));
    expect(sseFraming.complete()).toBe('event: complete\ndata:\n\n');
  });

  it('writes multipart parts that each end with the next delimiter, and a close that completes it', () => {
    const body = multipartFraming.opening + multipartFraming.next('{"data":{"x":1}}') + multipartFraming.heartbeat + multipartFraming.complete();
    expect(body).toBe(
      '\r\n--graphql\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{"payload":{"data":{"x":1}}}' +
        '\r\n--graphql\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{}' +
        '\r\n--graphql--\r\n',
    );
    const failed = multipartFraming.failed([{ message: 'no', extensions: { code: 'authentication_failed' } }]);
    expect(failed.endsWith('\r\n--graphql--\r\n')).toBe(true);
    expect(failed).toContain('{"payload":null,"errors":[{"message":"no","extensions":{"code":"authentication_failed"}}]}');
  });

  it.each([
    ['text/event-stream', 'graphql_sse'],
    ['application/json, text/event-stream;q=0.9', 'graphql_sse'],
    ['multipart/mixed;boundary="graphql";subscriptionSpec="1.0",application/json', 'multipart'],
    ['multipart/mixed; subscriptionSpec=1.0', 'multipart'],
    // Apollo Client 4's own header.
    ['multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9', 'multipart'],
  ])('%s picks %s', (accept, name) => {
    expect(framingOf(accept)?.name).toBe(name);
  });

  it.each([undefined, 'application/json', 'multipart/mixed', 'multipart/mixed;deferSpec=20220824', 'multipart/mixed;subscriptionSpec=2.0', 'text/event-streams'])(
    '%s picks no stream',
    (accept) => {
      expect(framingOf(accept)).toBeNull();
    },
  );
});
