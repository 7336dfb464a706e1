import type { GraphQLFormattedError } from '../graphqljs';
import type { SubscriptionFraming } from './framing';

/**
 * Apollo's multipart HTTP subscriptions (subscriptionSpec 1.0), framed as @apollo/client 4 parses them: each
 * write ends with the next delimiter (a part is handed on only once it has come), and every end writes the
 * close delimiter. More: docs/decisions/notes/graphql.md, "Multipart framing".
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
