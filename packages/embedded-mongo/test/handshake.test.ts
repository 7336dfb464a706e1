import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDb, type TestDb } from './helpers';

let t: TestDb;
beforeAll(async () => {
  t = await startTestDb('handshake');
});
afterAll(async () => {
  await t.close();
});

describe('handshake and server commands', () => {
  it('answers hello as a writable replica set primary with sessions', async () => {
    const hello = await t.conn.db!.admin().command({ hello: 1 });
    expect(hello.ok).toBe(1);
    expect(hello.isWritablePrimary).toBe(true);
    expect(typeof hello.setName).toBe('string');
    expect(Array.isArray(hello.hosts)).toBe(true);
    expect(hello.hosts).toContain(hello.primary);
    expect(hello.logicalSessionTimeoutMinutes).toBeGreaterThan(0);
    expect(hello.maxWireVersion).toBeGreaterThanOrEqual(9);
    // Against the embedded engine the monitor must poll (no topologyVersion, so no exhaust streaming it
    // does not implement); a real server may stream.
    if (!process.env.MONGODB_URI) expect(hello.topologyVersion).toBeUndefined();
  });

  it('answers legacy isMaster', async () => {
    const r = await t.conn.db!.admin().command({ isMaster: 1 });
    expect(r.ismaster).toBe(true);
    expect(r.setName).toBeDefined();
  });

  it('answers ping and buildInfo', async () => {
    expect((await t.conn.db!.admin().command({ ping: 1 })).ok).toBe(1);
    const info = await t.conn.db!.admin().command({ buildInfo: 1 });
    expect(info.version).toMatch(/^\d+\.\d+/);
    expect(Array.isArray(info.versionArray)).toBe(true);
  });

  it('lists databases including ours once it has data', async () => {
    await t.conn.collection('things').insertOne({ a: 1 });
    const r = await t.conn.db!.admin().command({ listDatabases: 1 });
    expect(r.databases.map((d: { name: string }) => d.name)).toContain(t.dbName);
  });

  it('answers CommandNotFound for unknown commands', async () => {
    const err = await t.conn.db!.command({ frobnicateTheWidgets: 1 }).catch((e: unknown) => e);
    expect((err as { code: number }).code).toBe(59);
    expect((err as { codeName: string }).codeName).toBe('CommandNotFound');
  });

  it('accepts endSessions', async () => {
    const s = t.conn.getClient().startSession();
    await t.conn.collection('things').findOne({}, { session: s });
    await s.endSession();
    const r = await t.conn.db!.admin().command({ endSessions: [s.id] });
    expect(r.ok).toBe(1);
  });

  it('reports operationTime on replies (and $clusterTime only on a real replica set)', async () => {
    const r = await t.conn.db!.command({ find: 'things', filter: {} }, { raw: false });
    expect(r.operationTime).toBeDefined();
    // The embedded engine does not gossip cluster time (one member; it would cost every command a
    // decode and re-encode); sessions and change streams work from operationTime.
    if (process.env.MONGODB_URI) expect(r.$clusterTime?.clusterTime).toBeDefined();
    else expect(r.$clusterTime).toBeUndefined();
  });
});
