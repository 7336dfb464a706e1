import { Connection } from 'mongodb/lib/cmap/connection.js';
import type { Span } from '@opentelemetry/api';
import { databaseCommand } from '../metrics/database';
import { tracingInternals } from '../tracing/tracing';

/**
 * Times every database command this thread sends (the command-duration histogram, and a CLIENT span with
 * tracing on) by wrapping the connection's `command`: the driver's `monitorCommands` would decode every reply
 * on every request (docs/decisions/0005-command-timing-without-driver-monitoring.md). Installed once per
 * thread. More: docs/decisions/notes/storage.md, "Command timing".
 */
const HANDSHAKE: ReadonlySet<string> = new Set(['hello', 'ismaster', 'isMaster', 'saslStart', 'saslContinue', 'authenticate', 'getnonce']);

// eslint-disable-next-line no-restricted-syntax -- wraps mongoose's one connection, once per thread
let installed = false;

export function timeDatabaseCommands(): void {
  if (installed) return;
  installed = true;
  const send = Connection.prototype.command;
  Connection.prototype.command = async function timedCommand(this: Connection, ns, command, options, responseType) {
    const name = commandName(command);
    if (name === undefined || HANDSHAKE.has(name)) return send.call(this, ns, command, options, responseType);
    const span = tracingInternals() ? startSpan(name, ns.db, command[name]) : undefined;
    const started = performance.now();
    try {
      const reply = await send.call(this, ns, command, options, responseType);
      databaseCommand(name).observe((performance.now() - started) / 1000);
      span?.end();
      return reply;
    } catch (err) {
      databaseCommand(name).observe((performance.now() - started) / 1000);
      if (span) {
        span.setStatus({ code: 2, message: err instanceof Error ? err.message : 'command failed' });
        span.end();
      }
      throw err;
    }
  };
}

/** A command document's first key is the command's name (`find`, `insert`, `getMore`, …). */
function commandName(command: Record<string, unknown>): string | undefined {
  for (const key in command) return key;
  return undefined;
}

/** Labelled by command and collection only: a filter or a document can hold a customer's data. */
function startSpan(name: string, databaseName: string, target: unknown): Span | undefined {
  const tracing = tracingInternals();
  if (!tracing) return undefined;
  return tracing.tracer.startSpan(`mongodb ${name}`, {
    kind: 2,
    attributes: {
      'db.system.name': 'mongodb',
      'db.operation.name': name,
      'db.namespace': databaseName,
      ...(typeof target === 'string' ? { 'db.collection.name': target } : {}),
    },
  });
}
