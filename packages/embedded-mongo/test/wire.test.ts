import net from 'node:net';
import { BSON } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipIfExternal, startTestDb, type TestDb } from './helpers';

let t: TestDb;
let address: net.NetConnectOpts = { host: '127.0.0.1', port: 0 };
beforeAll(async () => {
  t = await startTestDb('wire');
  const sock = /^mongodb:\/\/([^/?,]+\.sock)\//.exec(t.uri); // EMBEDDED_DB_TRANSPORT=socket
  const m = /^mongodb:\/\/(?:[^@/]*@)?([^:/,]+):(\d+)/.exec(t.uri);
  if (sock) address = { path: decodeURIComponent(sock[1]!) };
  else if (m) address = { host: m[1]!, port: Number(m[2]) };
});
afterAll(async () => {
  await t.close();
});

interface RawResult {
  data: Buffer;
  closed: boolean;
}

/**
 * Sends bytes on a fresh socket; resolves when a full reply arrived, or (untilClose) only when
 * the server closes the connection.
 */
function raw(bytes: Buffer, opts: { end?: boolean; untilClose?: boolean } = {}): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(address);
    let data = Buffer.alloc(0);
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve({ data, closed });
    };
    sock.on('connect', () => {
      sock.write(bytes);
      if (opts.end) sock.end();
    });
    sock.on('data', (d) => {
      data = Buffer.concat([data, d]);
      if (!opts.untilClose && data.length >= 4 && data.length >= data.readInt32LE(0)) finish(false);
    });
    sock.on('close', () => finish(true));
    sock.on('error', (e) => (settled ? undefined : (e as NodeJS.ErrnoException).code === 'ECONNRESET' ? finish(true) : reject(e)));
  });
}

function header(length: number, opCode: number, requestId = 1): Buffer {
  const h = Buffer.alloc(16);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(requestId, 4);
  h.writeInt32LE(0, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

function opMsg(body: object, sequences: Array<[string, object[]]> = []): Buffer {
  const parts: Buffer[] = [Buffer.from([0, 0, 0, 0]), Buffer.from([0]), Buffer.from(BSON.serialize(body))];
  for (const [id, docs] of sequences) {
    const payload = Buffer.concat([Buffer.from(id + '\0'), ...docs.map((d) => Buffer.from(BSON.serialize(d)))]);
    const size = Buffer.alloc(4);
    size.writeInt32LE(payload.length + 4, 0);
    parts.push(Buffer.from([1]), size, payload);
  }
  const rest = Buffer.concat(parts);
  return Buffer.concat([header(16 + rest.length, 2013), rest]);
}

function replyBody(r: RawResult): Record<string, unknown> {
  const opCode = r.data.readInt32LE(12);
  if (opCode === 2013) return BSON.deserialize(r.data.subarray(21));
  if (opCode === 1) return BSON.deserialize(r.data.subarray(36));
  throw new Error(`unexpected reply opCode ${opCode}`);
}

async function stillWorks(): Promise<void> {
  const coll = t.conn.collection('alive');
  await coll.insertOne({ at: new Date() });
  expect(await coll.countDocuments()).toBeGreaterThan(0);
}

describe('wire protocol', () => {
  it('answers the legacy OP_QUERY isMaster handshake with OP_REPLY', async () => {
    const query = Buffer.from(BSON.serialize({ isMaster: 1 }));
    const body = Buffer.concat([Buffer.alloc(4), Buffer.from('admin.$cmd\0'), Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), query]);
    const r = await raw(Buffer.concat([header(16 + body.length, 2004, 42), body]));
    expect(r.data.readInt32LE(12)).toBe(1);
    expect(r.data.readInt32LE(8)).toBe(42);
    const doc = replyBody(r);
    expect(doc.ismaster).toBe(true);
    expect(doc.ok).toBe(1);
  });

  it('accepts OP_MSG with a kind-1 document sequence', async () => {
    const r = await raw(opMsg({ insert: 'seq', $db: t.dbName }, [['documents', [{ a: 1 }, { a: 2 }, { a: 3 }]]]));
    expect(replyBody(r)).toMatchObject({ n: 3, ok: 1 });
    expect(await t.conn.collection('seq').countDocuments()).toBe(3);
  });

  describe('malformed input closes only the offending connection', () => {
    it.skipIf(skipIfExternal('malformed wire: truncated header'))('truncated header', async () => {
      const r = await raw(Buffer.from([40, 0, 0, 0, 1, 0]), { end: true, untilClose: true });
      expect(r.closed).toBe(true);
      expect(r.data.length).toBe(0);
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: truncated body'))('truncated message body', async () => {
      const full = opMsg({ ping: 1, $db: 'admin' });
      const r = await raw(full.subarray(0, full.length - 5), { end: true, untilClose: true });
      expect(r.closed).toBe(true);
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: oversize message'))('declared length over 48 MB', async () => {
      const r = await raw(header(50 * 1024 * 1024, 2013), { untilClose: true });
      expect(r.closed).toBe(true);
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: undersize message'))('declared length below the header size', async () => {
      const r = await raw(header(8, 2013), { untilClose: true });
      expect(r.closed).toBe(true);
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: garbage BSON'))('garbage BSON in the body', async () => {
      const garbage = Buffer.from([20, 0, 0, 0, 0x02, 0x61, 0x00, 0xff, 0xff, 0xff, 0x7f, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x00]);
      const rest = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), garbage]);
      const r = await raw(Buffer.concat([header(16 + rest.length, 2013), rest]), { untilClose: true });
      expect(r.closed).toBe(true);
      // The client is told why before the connection goes away.
      expect(replyBody(r)).toMatchObject({ ok: 0 });
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: unknown opcode'))('unknown opcode', async () => {
      const r = await raw(Buffer.concat([header(24, 4242), Buffer.alloc(8)]), { untilClose: true });
      expect(r.closed).toBe(true);
      await stillWorks();
    });

    it.skipIf(skipIfExternal('malformed wire: concurrent cursor'))('a connection that sent garbage does not affect one in the middle of a cursor', async () => {
      const coll = t.conn.collection('cursor_during_abuse');
      await coll.insertMany(Array.from({ length: 50 }, (_, i) => ({ i })));
      const cursor = coll.find({}, { batchSize: 10 }).sort({ i: 1 });
      const firstHalf: number[] = [];
      for (let k = 0; k < 25; k++) firstHalf.push((await cursor.next())!.i as number);
      await Promise.all([raw(header(8, 2013), { untilClose: true }), raw(Buffer.concat([header(24, 4242), Buffer.alloc(8)]), { untilClose: true })]);
      const rest = (await cursor.toArray()).map((d) => d.i as number);
      expect([...firstHalf, ...rest]).toEqual(Array.from({ length: 50 }, (_, i) => i));
    });
  });
});
