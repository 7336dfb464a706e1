import type { components, PgwClient } from '@pgw/client';
import { accountIdOf, apiClient } from '../api';
import { configDir } from '../configStore';
import { resolveConnection, type Connection, type ConnectionFlags } from '../connection';
import { apiFailure, UsageError } from '../errors';
import { EventSocket, graphqlWsUrl, PAGE_SIZE, type GatewayEvent } from '../eventSocket';
import { ask, listenerSockets, type ResendAnswer } from '../listen/control';
import { listenerSocketPrefix } from '../listen/listenFiles';
import { createOutput, paintStatus, type Output } from '../output';
import { printable } from '../printable';

export interface ResendOptions extends ConnectionFlags {
  endpoint?: string;
  listenersOnly?: boolean;
  json?: boolean;
}

type Delivery = components['schemas']['WebhookDelivery'];

/** How far back (events, newest first) `resend` looks for the event: the gateway has no GET /events/{id}. */
export const MAX_EVENT_SCAN = 10_000;

/**
 * `pgw resend <event_id>`: sends one event of the account again, to every `pgw listen` running for this
 * gateway and account (through their local sockets: they forward it signed with their secret, as any
 * event) and to the account's webhook endpoints that have a delivery of it (POST
 * …/deliveries/{id}/retry: the gateway has no route to send an event to an endpoint anew, so an endpoint
 * that never had a delivery of it is skipped and said so). `--endpoint` picks one endpoint (no
 * listeners); `--listeners-only` skips the endpoints. Exit 1 when it reached no one or a target did not
 * answer 2xx.
 */
export async function resend(eventId: string, opts: ResendOptions): Promise<void> {
  if (!/^evt_[A-Za-z0-9]+$/.test(eventId)) throw new UsageError(`<event_id> must be an event id (evt_…), got '${eventId}'`);
  if (opts.endpoint !== undefined && !/^whe_[A-Za-z0-9]+$/.test(opts.endpoint)) {
    throw new UsageError(`--endpoint must be a webhook endpoint id (whe_…), got '${opts.endpoint}'`);
  }
  if (opts.endpoint !== undefined && opts.listenersOnly) throw new UsageError('--endpoint and --listeners-only exclude each other');
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const api = apiClient(conn);

  out.progress(`looking up ${eventId}`);
  const event = await findEvent(conn, eventId);
  if (!event) throw apiFailure('resource_not_found', `no event ${eventId} among the newest ${MAX_EVENT_SCAN} events of this account on ${conn.baseUrl}`);

  const results: boolean[] = [];
  if (opts.endpoint === undefined) {
    const accountId = await accountIdOf(api, conn);
    const sockets = listenerSockets(configDir(), listenerSocketPrefix(conn.baseUrl, accountId));
    for (const socket of sockets) {
      const answer = await ask(socket, event);
      if (answer === 'stale' || answer === 'alive') continue;
      results.push(answer.status >= 200 && answer.status < 300);
      printListener(out, event, answer);
    }
    if (results.length === 0) out.notice(`no pgw listen running for ${accountId} on ${conn.baseUrl}`);
  }
  if (!opts.listenersOnly) {
    const endpoints = opts.endpoint !== undefined ? [opts.endpoint] : (await api.GET('/webhook_endpoints')).data.data.map((e) => e.id);
    for (const id of endpoints) {
      const delivery = await deliveryOf(api, id, eventId);
      if (!delivery) {
        // Asked for by name: not resending there is a failure. Otherwise the endpoint simply never had it.
        if (opts.endpoint !== undefined) results.push(false);
        out.notice(`endpoint ${printable(id)}: no delivery of ${eventId} among its last 50 (not subscribed to ${printable(event.type)}, or made after it); the gateway cannot send an event anew`);
        continue;
      }
      const { data: after } = await api.POST('/webhook_endpoints/{id}/deliveries/{delivery_id}/retry', { params: { path: { id, delivery_id: delivery.id } } });
      results.push(after.last_status !== null && after.last_status >= 200 && after.last_status < 300);
      printEndpoint(out, event, id, after);
    }
  }
  if (results.length === 0) throw apiFailure('no_target', `${eventId} was sent nowhere: no running pgw listen and no endpoint with a delivery of it`);
  const failed = results.filter((ok) => !ok).length;
  if (failed > 0) throw apiFailure('resend_failed', `${failed} of ${results.length} targets did not answer 2xx`);
}

/** The event, from the account's events (GraphQL pages, newest first), or null. */
async function findEvent(conn: Connection, id: string): Promise<GatewayEvent | null> {
  const socket = await EventSocket.open(conn);
  try {
    let after: string | null = null;
    for (let scanned = 0; scanned < MAX_EVENT_SCAN; scanned += PAGE_SIZE) {
      const page = await socket.page(after);
      const found = page.events.find((e) => e.id === id);
      if (found) return found;
      if (!page.hasNextPage || !page.endCursor) return null;
      after = page.endCursor;
    }
    return null;
  } catch (err) {
    if (err instanceof Error && err.message === 'connection closed') {
      // Why it closed: a refused key is said as such; anything else names the URL that failed.
      const end = await socket.ended;
      if ('fatal' in end) throw end.fatal;
      throw apiFailure('connection_error', `${graphqlWsUrl(conn.baseUrl)}: ${end.retry}, before the events were read`);
    }
    throw err;
  } finally {
    socket.close();
  }
}

async function deliveryOf(api: PgwClient, endpoint: string, eventId: string): Promise<Delivery | null> {
  const { data } = await api.GET('/webhook_endpoints/{id}/deliveries', { params: { path: { id: endpoint } } });
  // Newest first: the event's latest delivery to this endpoint.
  return data.data.find((d) => d.event_id === eventId) ?? null;
}

function printListener(out: Output, event: GatewayEvent, a: ResendAnswer): void {
  if (out.json) return out.object({ object: 'pgw.resend', target: 'listener', event_id: event.id, ...a });
  const status = a.error ? `${paintStatus(out, 0)} ${printable(a.error)}` : paintStatus(out, a.status);
  out.line(`${printable(event.id)}  listener ${printable(a.forward_to)}  ${status}  ${printable(a.latency_ms)} ms${a.attempts > 1 ? `  (${a.attempts} attempts)` : ''}`);
}

function printEndpoint(out: Output, event: GatewayEvent, endpoint: string, d: Delivery): void {
  if (out.json) {
    return out.object({ object: 'pgw.resend', target: 'endpoint', event_id: event.id, endpoint, delivery: d.id, status: d.last_status, latency_ms: d.last_ms, state: d.state, error: d.last_error });
  }
  const status = d.last_error ? `${paintStatus(out, d.last_status ?? 0)} ${printable(d.last_error)}` : paintStatus(out, d.last_status ?? 0);
  out.line(`${printable(event.id)}  endpoint ${printable(endpoint)} (delivery ${printable(d.id)})  ${status}  ${printable(d.last_ms ?? 0)} ms  ${printable(d.state)}`);
}
