/** Handshake, server-level and session commands. */
import { Long, ObjectId } from 'bson';
import { ErrorCodes, MongoCommandError } from '../errors';
import { isPlainObject, type Doc } from '../values';
import type { CommandContext, Handler } from './context';

export const MAX_WIRE_VERSION = 21; // MongoDB 7.0; the mongodb 7 driver needs >= 9
export const MAX_MESSAGE_BYTES = 48_000_000;
export const MAX_BSON_BYTES = 16 * 1024 * 1024;
export const SERVER_VERSION = '7.0.0';
const ELECTION_ID = new ObjectId('7fffffff0000000000000001');

function helloReply(c: CommandContext, legacy: boolean): Doc {
  const s = c.server;
  const ts = c.engine.clock.current();
  const now = new Date();
  const opTime = { ts, t: Long.fromNumber(1) };
  // No topologyVersion: with it, drivers switch their monitor to the streaming (exhaust) protocol,
  // which expects replies flagged moreToCome every maxAwaitTimeMS; without it they poll hello every
  // heartbeat, which a one-member set whose topology never changes serves just as well.
  const reply: Doc = {};
  if (legacy) reply.ismaster = true;
  else reply.isWritablePrimary = true;
  Object.assign(reply, {
    ...(c.cmd.helloOk === true ? { helloOk: true } : {}),
    setName: s.setName,
    setVersion: 1,
    hosts: [s.hostPort],
    primary: s.hostPort,
    me: s.hostPort,
    secondary: false,
    electionId: ELECTION_ID,
    lastWrite: { opTime, lastWriteDate: now, majorityOpTime: opTime, majorityWriteDate: now },
    maxBsonObjectSize: MAX_BSON_BYTES,
    maxMessageSizeBytes: MAX_MESSAGE_BYTES,
    maxWriteBatchSize: 100_000,
    localTime: now,
    logicalSessionTimeoutMinutes: 30,
    connectionId: s.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  });
  return reply;
}

async function hello(c: CommandContext, legacy: boolean): Promise<Doc> {
  // Streaming monitors send topologyVersion + maxAwaitTimeMS and expect us to hold the reply
  // until the topology changes (it never does here) or the time is up; replying at once would
  // make them spin.
  const wait = Number(c.cmd.maxAwaitTimeMS);
  if (isPlainObject(c.cmd.topologyVersion) && Number.isFinite(wait) && wait > 0) {
    await c.server.sleep(Math.min(wait, 60_000));
  }
  return helloReply(c, legacy);
}

function buildInfo(): Doc {
  return {
    version: SERVER_VERSION,
    gitVersion: 'embedded',
    versionArray: [7, 0, 0, 0],
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_BYTES,
    storageEngines: ['embedded'],
    javascriptEngine: 'none',
    modules: [],
    openssl: { running: 'disabled' },
    ok: 1,
  };
}

function listDatabases(c: CommandContext): Doc {
  const databases: Doc[] = [];
  let total = 0;
  for (const [name, colls] of c.engine.dbs) {
    let docs = 0;
    for (const coll of colls.values()) docs += coll.size;
    const size = docs * 256; // rough: we do not track byte sizes
    total += size;
    databases.push(c.cmd.nameOnly ? { name } : { name, sizeOnDisk: size, empty: docs === 0 });
  }
  return { databases, totalSize: total, totalSizeMb: Math.round(total / 1e6), ok: 1 };
}

function endSessions(c: CommandContext): Doc {
  const list = c.cmd.endSessions;
  if (Array.isArray(list)) for (const lsid of list) c.engine.txns.endSession(lsid);
  return { ok: 1 };
}

async function commitTransaction(c: CommandContext): Promise<Doc> {
  if (!c.txn) throw new MongoCommandError(ErrorCodes.NoSuchTransaction, 'no transaction in progress', { errorLabels: ['TransientTransactionError'] });
  await c.engine.commitTransaction(c.txn);
  return { ok: 1 };
}

function abortTransaction(c: CommandContext): Doc {
  if (!c.txn) throw new MongoCommandError(ErrorCodes.NoSuchTransaction, 'no transaction in progress');
  c.engine.abortTransaction(c.txn);
  return { ok: 1 };
}

function serverStatus(c: CommandContext): Doc {
  return {
    host: c.server.hostPort,
    version: SERVER_VERSION,
    process: 'embedded',
    uptime: Math.floor(process.uptime()),
    localTime: new Date(),
    connections: {},
    ...c.engine.counters.report(),
    ok: 1,
  };
}

export const adminCommands: Record<string, Handler> = {
  hello: (c) => hello(c, false),
  isMaster: (c) => hello(c, true),
  ismaster: (c) => hello(c, true),
  ping: () => ({ ok: 1 }),
  buildInfo,
  buildinfo: buildInfo,
  endSessions,
  listDatabases,
  commitTransaction,
  abortTransaction,
  serverStatus,
  whatsmyuri: (c) => ({ you: c.server.hostPort, ok: 1 }),
  connectionStatus: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
  getParameter: () => ({ featureCompatibilityVersion: { version: '7.0' }, ok: 1 }),
  refreshSessions: () => ({ ok: 1 }),
  killAllSessions: (c) => {
    c.engine.txns.abortAll();
    return { ok: 1 };
  },
};
