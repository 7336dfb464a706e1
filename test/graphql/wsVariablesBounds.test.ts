import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi, type MockInstance } from 'vitest';
import { logger } from '../../src/logger';
import { MAX_REQUEST_JSON_DEPTH } from '../../src/graphql/requestDepth';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { openSocket, type RawSocket } from './rawSocket';
import { sharedGateway } from '../support/server';

/**
 * Issue 54, "refuse early": a WebSocket `subscribe` payload passes the same depth check as an HTTP body
 * (src/graphql/requestDepth.ts, through requestParams.ts), answered with the same error, over a
 * real socket. Before it, variables nested 10,000 deep reached recursive code: a mutation with them as
 * `metadata` answered `internal_error` with a stack in the log. The size of a message is bounded before
 * it is parsed: over MAX_BODY_BYTES, the socket is closed with 1009 (RFC 6455 "message too big").
 */
let server: TestServer;
let acct: TestAccount;
let logged: MockInstance[];

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
});
afterAll(async () => {
  await server?.stop();
});
// Whatever these requests do, nothing is logged as an error, and no stack reaches the console.
beforeEach(() => {
  logged = [vi.spyOn(logger, 'error'), vi.spyOn(console, 'error')];
});
afterEach(() => {
  for (const spy of logged) {
    expect(spy.mock.calls.map((c) => String(c.at(-1)).slice(0, 300))).toEqual([]);
    spy.mockRestore();
  }
});

/** `{"a":{"a":…1…}}` nested `depth` deep, as text: JSON.stringify itself would overflow the stack. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

const METADATA_MUTATION = `mutation($m: JSON, $k: String!) {
  createPaymentIntent(input: {amount: 1000, currency: "AOA", paymentMethod: MULTICAIXA_REFERENCE, metadata: $m}, idempotencyKey: $k) { id } }`;

/** The request body (HTTP) or subscribe payload (WebSocket): `{"query": …, "variables": <text>}`. */
function requestText(query: string, variables: string): string {
  return `{"query":${JSON.stringify(query)},"variables":${variables}}`;
}

function sendRaw(socket: RawSocket, id: string, payload: string): void {
  socket.ws.send(`{"id":"${id}","type":"subscribe","payload":${payload}}`);
}

async function opened(): Promise<RawSocket> {
  const result = await openSocket(server.baseUrl, acct.sk);
  if (!result.ok) throw new Error(`socket refused: ${JSON.stringify(result)}`);
  return result.socket;
}

async function httpPost(body: string): Promise<{ status: number; errors?: Array<{ message: string; extensions?: { code?: string } }> }> {
  const res = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' }, body });
  return { status: res.status, ...((await res.json()) as object) };
}

it('refuses variables nested 10,000 deep with the HTTP body reader’s own error, and the socket serves on', async () => {
  const deep = requestText(METADATA_MUTATION, `{"m":${nested(10_000)},"k":"ws-deep-variables-1"}`);
  const overHttp = await httpPost(deep);
  expect(overHttp.status).toBe(400);
  expect(overHttp.errors?.[0]?.extensions?.code).toBe('invalid_request');
  expect(overHttp.errors?.[0]?.message).toBe(`Request body is nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`);

  const socket = await opened();
  sendRaw(socket, 'deep', deep);
  const refused = await socket.firstMessage('deep');
  expect(refused.type).toBe('error');
  expect(refused.payload).toEqual([{ message: overHttp.errors![0]!.message, extensions: { code: 'invalid_request', request_id: expect.stringMatching(/^req_/) } }]);
  // The same socket runs the next operation, and no payment was created by the refused one.
  socket.subscribe('after', '{ paymentIntents(first: 5) { nodes { id } } }');
  expect(await socket.firstMessage('after')).toEqual({ type: 'next', payload: { data: { paymentIntents: { nodes: [] } } } });
  socket.ws.close(1000);
});

it('draws the line where HTTP does: a payload MAX_REQUEST_JSON_DEPTH deep runs, one level more is refused, over both', async () => {
  // The body or payload is level 1, `variables` level 2: the value inside takes the rest (a variable
  // the operation does not declare is still sent, and checked).
  const query = '{ __typename }';
  const atLimit = requestText(query, `{"x":${nested(MAX_REQUEST_JSON_DEPTH - 2)}}`);
  const overLimit = requestText(query, `{"x":${nested(MAX_REQUEST_JSON_DEPTH - 1)}}`);
  expect((await httpPost(atLimit)).status).toBe(200);
  expect(await httpPost(overLimit)).toMatchObject({ status: 400, errors: [{ message: `Request body is nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels` }] });
  const socket = await opened();
  sendRaw(socket, 'at', atLimit);
  expect(await socket.firstMessage('at')).toEqual({ type: 'next', payload: { data: { __typename: 'Query' } } });
  sendRaw(socket, 'over', overLimit);
  expect((await socket.firstMessage('over')).payload).toMatchObject([{ message: `Request body is nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`, extensions: { code: 'invalid_request' } }]);
  socket.ws.close(1000);
});

it('applies the same check to the variables of GET /graphql', async () => {
  const search = new URLSearchParams({ query: '{ __typename }', variables: `{"x":${nested(1_000)}}` });
  const res = await fetch(`${server.baseUrl}/graphql?${search}`, { headers: { authorization: `Bearer ${acct.sk}`, accept: 'application/json' } });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
  expect(body.errors[0]).toMatchObject({ message: `Request body is nested deeper than ${MAX_REQUEST_JSON_DEPTH} levels`, extensions: { code: 'invalid_request' } });
});

it('closes a socket sent a 1 MB variables object with 1009, logs no error, and serves the next socket', async () => {
  const socket = await opened();
  const big = `{"blob":${JSON.stringify('x'.repeat(1024 * 1024))}}`;
  sendRaw(socket, 'big', requestText('query($blob: String) { __typename }', big));
  const closed = await socket.closed;
  expect(closed.code).toBe(1009);
  const next = await opened();
  next.subscribe('alive', '{ __typename }');
  expect(await next.firstMessage('alive')).toEqual({ type: 'next', payload: { data: { __typename: 'Query' } } });
  next.ws.close(1000);
  // Over HTTP the same request is the body limit's 413.
  const overHttp = await httpPost(requestText('query($blob: String) { __typename }', big));
  expect(overHttp.status).toBe(413);
  expect(overHttp.errors?.[0]?.extensions?.code).toBe('payload_too_large');
});
