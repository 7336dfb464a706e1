import type { GraphQLFormattedError } from '../graphqljs';
import type { SubscriptionFraming } from './framing';

/**
 * Apollo's multipart HTTP subscriptions (subscriptionSpec 1.0): parts delimited by `\r\n--graphql`,
 * each its JSON content type, a blank line, then `{"payload": <ExecutionResult>}`; `{}` parts as
 * heartbeats every 5 s; an error of the transport (not of the operation) as
 * `{"payload": null, "errors": [...]}`; the close delimiter `\r\n--graphql--\r\n` at the end.
 * What @apollo/client 4 parses (link/http/parseAndCheckHttpResponse.js, readMultipartBody): it hands a
 * part on only once the delimiter after it has come, so each write ends with the next delimiter (as
 * Apollo's router does), not starts with it, or every message would wait for the next heartbeat; it
 * skips `{}`, turns top-level `errors` into protocol errors, and calls a body without the close
 * delimiter a premature end, so every end here writes it.
 */
const DELIMITER = '\r\n--graphql';
const part = (json: string) => `\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${json}${DELIMITER}`;
/** After the delimiter that ended the last part, `--` makes it the close delimiter. */
const CLOSE = '--\r\n';

/** Apollo's heartbeat period: its router sends one every 5 s, and its clients expect no less. */
const HEARTBEAT_MS = 5_000;

const transportErrors = (errors: readonly GraphQLFormattedError[]) => part(JSON.stringify({ payload: null, errors })) + CLOSE;

export const multipartFraming: SubscriptionFraming = {
  name: 'multipart',
  contentType: 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"',
  opening: DELIMITER,
  heartbeat: part('{}'),
  heartbeatMs: () => HEARTBEAT_MS,
  next: (json) => part(`{"payload":${json}}`),
  complete: () => CLOSE,
  failed: transportErrors,
  interrupted: (error) => transportErrors([error]),
};
/** Whether an Accept header asks for multipart subscriptions (`subscriptionSpec=1.0`, quoted or not). */
export function acceptsMultipartSubscription(accept: string): boolean {
  return accept
    .split(',')
    .some((range) => /^\s*multipart\/mixed\s*(;|$)/i.test(range) && /;\s*subscriptionSpec\s*=\s*"?1\.0"?\s*(;|$)/i.test(range));
}
