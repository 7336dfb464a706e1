import { afterAll, beforeAll, expect, it } from 'vitest';
import type { GraphQLContext } from '../../src/graphql/context';
import { GraphQLError } from '../../src/graphql/graphqljs';
import { formatGraphQLError } from '../../src/graphql/errors';
import { buildExecutableSchema } from '../../src/graphql/schema';
import { createApollo } from '../../src/graphql/apollo';
import { ApiError } from '../../src/errors';

/** Error formatting without a server: what leaves it, and what never does. */
const apollo = createApollo(buildExecutableSchema());

beforeAll(async () => {
  await apollo.start();
});
afterAll(async () => {
  await apollo.stop();
});

/** A context whose key is missing: any resolver that checks permissions fails with a TypeError. */
const brokenContext = { requestId: 'req_unit', errorCodes: [] } as unknown as GraphQLContext;

it('turns an unexpected exception into internal_error with a generic message, no stack, no detail', async () => {
  const res = await apollo.executeOperation({ query: '{ account { id } }' }, { contextValue: brokenContext });
  const body = res.body.kind === 'single' ? res.body.singleResult : null;
  expect(body?.errors).toHaveLength(1);
  const [error] = body!.errors!;
  expect(error!.extensions).toEqual({ code: 'internal_error', request_id: 'req_unit' });
  expect(error!.message).toBe('An internal error occurred. Retry with the same idempotencyKey.');
  const text = JSON.stringify(body);
  expect(text).not.toMatch(/TypeError|stacktrace|Cannot read|\.ts:/);
  expect(error!.path).toEqual(['account']);
});

it('keeps the code and message of an ApiError, and maps GraphQL refusals to invalid_request', () => {
  const api = new GraphQLError('wrapped', { originalError: new ApiError('payment_already_processed', 'This payment is SUCCEEDED'), path: ['x'] });
  expect(formatGraphQLError(api.toJSON(), api)).toMatchObject({ message: 'This payment is SUCCEEDED', extensions: { code: 'payment_already_processed' } });

  const validation = new GraphQLError('Cannot query field "nope" on type "Query".', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  expect(formatGraphQLError(validation.toJSON(), validation)).toMatchObject({ extensions: { code: 'invalid_request' } });

  const secret = new GraphQLError('connect ECONNREFUSED mongodb://admin:hunter2@db', { originalError: new Error('connect ECONNREFUSED mongodb://admin:hunter2@db'), path: ['y'] });
  const formatted = formatGraphQLError(secret.toJSON(), secret);
  expect(formatted.extensions).toEqual({ code: 'internal_error' });
  expect(JSON.stringify(formatted)).not.toContain('hunter2');
});

it('rejects an over-deep operation before running any resolver', async () => {
  const res = await apollo.executeOperation(
    { query: '{ refund(id: "rf_x") { paymentIntent { refunds { paymentIntent { refunds { paymentIntent { refunds { paymentIntent { id } } } } } } } } }' },
    { contextValue: brokenContext },
  );
  const body = res.body.kind === 'single' ? res.body.singleResult : null;
  expect(res.http.status).toBe(400);
  expect(body?.errors?.[0]?.extensions?.code).toBe('invalid_request');
  expect(body?.data).toBeUndefined();
});
