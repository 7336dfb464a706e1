import type { mongo } from 'mongoose';
import type { Span } from '@opentelemetry/api';
import { tracingInternals } from '../tracing/tracing';

/**
 * With tracing on, a CLIENT span per database command, a child of whatever span is active when the
 * driver starts it (a request's, a timer firing's): the driver emits `commandStarted` in the caller's
 * asynchronous context, and `commandSucceeded` / `commandFailed` with the same requestId. Needs the
 * client's `monitorCommands` (CLIENT_OPTIONS). Labelled by command and
 * collection only: a filter or a document can hold a customer's data.
 */
export function traceCommands(client: mongo.MongoClient): void {
  const r = tracingInternals();
  if (!r) return;
  const open = new Map<number, Span>();
  client.on('commandStarted', (e) => {
    const collection = e.command?.[e.commandName];
    const span = r.tracer.startSpan(`mongodb ${e.commandName}`, {
      kind: 2,
      attributes: {
        'db.system.name': 'mongodb',
        'db.operation.name': e.commandName,
        'db.namespace': e.databaseName,
        ...(typeof collection === 'string' ? { 'db.collection.name': collection } : {}),
      },
    });
    open.set(e.requestId, span);
  });
  const end = (e: { requestId: number }, failure?: string) => {
    const span = open.get(e.requestId);
    if (!span) return;
    open.delete(e.requestId);
    if (failure) span.setStatus({ code: 2, message: failure });
    span.end();
  };
  client.on('commandSucceeded', (e) => end(e));
  client.on('commandFailed', (e) => end(e, e.failure?.message ?? 'command failed'));
}
