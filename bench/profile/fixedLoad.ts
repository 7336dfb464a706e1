import autocannon from 'autocannon';
import { CREATE_INTENT_BODY } from '../lib/api';
import { GRAPHQL_DETAIL_QUERY, GRAPHQL_ONE_QUERY } from '../lib/graphqlQueries';
import { uniqueKeyRequest } from '../lib/load';

/**
 * A fixed number of requests (not a duration) at 20 connections (env CONNECTIONS to change it), for
 * instructionsPerRequest.sh:
 *   npx tsx bench/profile/fixedLoad.ts get|post|graphql-one|graphql-detail <gateway url> <secret key> <count> [payment id]
 * `get` reads the payment by id; `post` creates payments, each with its own Idempotency-Key;
 * `graphql-one` and `graphql-detail` read the payment with the GraphQL rows' queries of `npm run bench`.
 * Prints the count of 2xx and other answers.
 */
const [mode, url, sk, count, paymentId] = process.argv.slice(2);
const GRAPHQL: Record<string, string> = { 'graphql-one': GRAPHQL_ONE_QUERY, 'graphql-detail': GRAPHQL_DETAIL_QUERY };
const graphqlQuery = mode === undefined ? undefined : GRAPHQL[mode];
if ((mode !== 'get' && mode !== 'post' && graphqlQuery === undefined) || !url || !sk || !count || (mode !== 'post' && !paymentId)) {
  console.error('usage: fixedLoad.ts get|post|graphql-one|graphql-detail <gateway url> <secret key> <count> [payment id]');
  process.exit(2);
}
const auth = { authorization: `Bearer ${sk}` };
const json = { ...auth, 'content-type': 'application/json' };
const result = await autocannon({
  url,
  connections: Number(process.env.CONNECTIONS ?? 20),
  amount: Number(count),
  requests: [
    mode === 'get'
      ? { method: 'GET', path: `/v1/payment_intents/${paymentId}`, headers: auth }
      : graphqlQuery !== undefined
        ? { method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: graphqlQuery, variables: { id: paymentId } }) }
        : uniqueKeyRequest({ method: 'POST', path: '/v1/payment_intents', headers: json, body: JSON.stringify(CREATE_INTENT_BODY) }),
  ],
});
const ok = Object.entries(result.statusCodeStats).filter(([code]) => code.startsWith('2')).reduce((n, [, s]) => n + s.count, 0);
console.log(`${ok} 2xx, ${result.non2xx} other`);
