import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { createWriteGate, leaveWriteGate, type Saturation } from '../../src/http/writeGate';

/** A saturation the test sets, telling the gate of each change as the real sampler does. */
function fakeSaturation(initially: boolean) {
  let saturated = initially;
  const listeners = new Set<() => void>();
  const s: Saturation & { set(v: boolean): void; listeners: number } = {
    saturated: () => saturated,
    onChange(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    set(v) {
      saturated = v;
      for (const l of [...listeners]) l();
    },
    get listeners() {
      return listeners.size;
    },
  };
  return s;
}

/** A request through the gate: `ran` once the gate let it go on; `finish()` / `close()` as Node's response would. */
function send(gate: ReturnType<typeof createWriteGate>, method = 'POST') {
  const res = new EventEmitter();
  const r = {
    res: res as unknown as Response,
    ran: false,
    finish: () => {
      res.emit('finish');
      res.emit('close');
    },
    close: () => res.emit('close'),
  };
  gate({ method } as Request, res as unknown as Response, () => {
    r.ran = true;
  });
  return r;
}

describe('write gate', () => {
  it('lets every write through while the thread is not saturated', () => {
    const gate = createWriteGate(2, fakeSaturation(false));
    const sent = Array.from({ length: 10 }, () => send(gate));
    expect(sent.every((r) => r.ran)).toBe(true);
    expect(gate.inFlight).toBe(10);
    for (const r of sent) r.finish();
    expect(gate.inFlight).toBe(0);
  });

  it('holds writes past the cap while saturated and lets them go in arrival order as places free up', () => {
    const gate = createWriteGate(2, fakeSaturation(true));
    const [a, b, c, d] = [send(gate), send(gate), send(gate), send(gate)];
    expect([a.ran, b.ran, c.ran, d.ran]).toEqual([true, true, false, false]);
    expect(gate.waiting).toBe(2);
    b.finish();
    expect([c.ran, d.ran]).toEqual([true, false]);
    // A connection that ends after its answer releases its place once, not twice.
    b.close();
    expect(d.ran).toBe(false);
    a.close(); // the client left mid-request: the place is freed too
    expect(d.ran).toBe(true);
    expect(gate.inFlight).toBe(2);
  });

  it('lets a long-lived response give its place back (a subscription stream), once', () => {
    const gate = createWriteGate(1, fakeSaturation(true));
    const stream = send(gate);
    const next = send(gate);
    expect(next.ran).toBe(false);
    leaveWriteGate(stream.res);
    expect(next.ran).toBe(true);
    // The stream's own end later frees nothing more: the next write still holds the one place.
    stream.finish();
    expect(send(gate).ran).toBe(false);
    expect(gate.inFlight).toBe(1);
  });

  it('never holds a read', () => {
    const gate = createWriteGate(1, fakeSaturation(true));
    send(gate);
    send(gate);
    expect([send(gate, 'GET').ran, send(gate, 'HEAD').ran, send(gate, 'OPTIONS').ran]).toEqual([true, true, true]);
    expect(gate.waiting).toBe(1);
  });

  it('lets all that wait go once the saturation ends, and a new write does not pass those waiting', () => {
    const saturation = fakeSaturation(true);
    const gate = createWriteGate(1, saturation);
    const first = send(gate);
    const held = [send(gate), send(gate), send(gate)];
    expect(held.some((r) => r.ran)).toBe(false);
    expect(saturation.listeners).toBe(1);
    saturation.set(false);
    expect(held.every((r) => r.ran)).toBe(true);
    expect(gate.waiting).toBe(0);
    // Nothing waits: the gate no longer listens.
    expect(saturation.listeners).toBe(0);
    expect(first.ran).toBe(true);
    saturation.set(true);
    const late = send(gate);
    expect(late.ran).toBe(false);
  });

  it('drops a write whose client left while it waited: it never runs and takes no place', () => {
    const saturation = fakeSaturation(true);
    const gate = createWriteGate(1, saturation);
    const first = send(gate);
    const gone = send(gate);
    const next = send(gate);
    gone.close();
    expect(gate.waiting).toBe(1);
    first.finish();
    expect(gone.ran).toBe(false);
    expect(next.ran).toBe(true);
    expect(gate.inFlight).toBe(1);
    expect(gate.waiting).toBe(0);
  });
});
