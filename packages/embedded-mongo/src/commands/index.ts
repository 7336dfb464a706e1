/**
 * Command dispatch: resolves the session/transaction, takes the transaction write lock for
 * writes inside a transaction, runs the handler, makes its changes durable and decorates the
 * reply with operationTime. Unknown commands get CommandNotFound (59).
 */
import { OpContext, type Engine } from '../engine';
import { ErrorCodes, MongoCommandError, errorReply } from '../errors';
import type { Transaction } from '../transactions';
import { isPlainObject, type Doc } from '../values';
import { adminCommands } from './admin';
import { aggregateCommands } from './aggregate';
import type { Handler, ServerInfo } from './context';
import { ddlCommands } from './ddl';
import { explainCommands } from './explain';
import { findAndModifyCommands } from './findAndModify';
import { readCommands } from './read';
import { writeCommands } from './write';

const handlers = new Map<string, Handler>(
  Object.entries({
    ...adminCommands,
    ...readCommands,
    ...explainCommands,
    ...writeCommands,
    ...findAndModifyCommands,
    ...aggregateCommands,
    ...ddlCommands,
  }),
);

/**
 * When a write is answered. MongoDB answers `{ w: 1 }` (without `j: true`) once the primary has applied
 * the write, before its journal commit, and `{ w: 0 }` is not waited for at all; so does this engine.
 * Any other write concern (`w: "majority"`, `j: true`) or none is answered once the write is durable:
 * on a real replica set those wait for the journal too, and without a write concern the cluster's
 * default (`w: "majority"` since MongoDB 5.0) applies.
 */
export function writeAcknowledgement(cmd: Doc): 'durable' | 'applied' {
  const wc = cmd.writeConcern;
  if (!isPlainObject(wc) || wc.j === true) return 'durable';
  return wc.w === 1 || wc.w === 0 ? 'applied' : 'durable';
}

/** Commands that change documents; inside a transaction they need the transaction lock. */
const TXN_WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);

export async function runCommand(engine: Engine, db: string, cmd: Doc, server: ServerInfo): Promise<Doc> {
  const name = Object.keys(cmd)[0] ?? '';
  const handler = handlers.get(name);
  let reply: Doc;
  if (!handler) {
    engine.counters.unrecognized();
    reply = new MongoCommandError(ErrorCodes.CommandNotFound, `no such command: '${name}'`).toReply();
  } else {
    const count = engine.counters.started(name);
    let txn: Transaction | undefined;
    try {
      txn = engine.txns.resolve(cmd, name);
      if (txn) txn.lastConnection = server.connectionId;
      const op = new OpContext(db, txn);
      if (txn && TXN_WRITES.has(name)) await engine.txns.acquire(txn);
      try {
        reply = await handler({ engine, db, cmd, name, op, txn, server });
      } finally {
        await engine.finish(op, writeAcknowledgement(cmd));
      }
      // A failed write aborts the surrounding transaction, as on a real server.
      if (txn && txn.state === 'active' && Array.isArray(reply.writeErrors) && reply.writeErrors.length) {
        engine.abortTransaction(txn);
      }
    } catch (e) {
      if (txn && txn.state === 'active' && TXN_WRITES.has(name)) engine.abortTransaction(txn);
      count.failed++;
      if (!(e instanceof MongoCommandError)) engine.logger('embedded db: command failed', { command: name, error: String(e) });
      reply = errorReply(e);
    }
  }
  // operationTime is what sessions (causal consistency) and change streams (startAtOperationTime)
  // use. No $clusterTime gossip: a one-member set has nobody to gossip with, and once a driver has
  // seen a $clusterTime it decodes it from every reply and sends it back in every command (which
  // we would decode again), a sizeable share of the per-command cost on both sides.
  reply.operationTime = engine.clock.current();
  return reply;
}
