// The metrics endpoint's bound on connections, with fake sockets and a fake clock: which
// connection gives way to a new one at the bound (the one idle longest, else the one waiting
// longest for its request, never one being answered), and a slot freed when its socket closes.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionSlots } from '../../src/metrics/connection-slots.js';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly name: string) {
    super();
  }
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit('close');
    }
    return this;
  }
}

function setUp(maxConnections: number) {
  const clock = { nowMs: 0 };
  const slots = new ConnectionSlots(maxConnections, () => clock.nowMs);
  const open = (name: string) => {
    const socket = new FakeSocket(name);
    clock.nowMs += 1;
    slots.admit(socket as unknown as Socket);
    return socket;
  };
  return { slots, clock, open, as: (socket: FakeSocket) => socket as unknown as Socket };
}

describe('connection slots', () => {
  it('holds connections up to the bound, and frees a slot when a socket closes', () => {
    const { slots, open } = setUp(3);
    const [a, b, c] = [open('a'), open('b'), open('c')];
    expect(slots.size).toBe(3);
    b.destroy();
    expect(slots.size).toBe(2);
    const d = open('d');
    expect(slots.size).toBe(3);
    expect([a, c, d].map((socket) => socket.destroyed)).toEqual([false, false, false]);
  });

  it('at the bound, replaces the connection idle longest, then the one waiting longest for its request', () => {
    const { slots, clock, open, as } = setUp(4);
    const waitingOld = open('waiting-old');
    const openedFirst = open('opened-first');
    const idleFirst = open('idle-first');
    const waitingNew = open('waiting-new');
    slots.answering(as(openedFirst));
    slots.answering(as(idleFirst));
    clock.nowMs = 10;
    slots.answered(as(idleFirst));
    clock.nowMs = 20;
    slots.answered(as(openedFirst));
    // Idle longest, not opened first.
    open('e');
    expect(idleFirst.destroyed).toBe(true);
    open('f');
    expect(openedFirst.destroyed).toBe(true);
    open('g');
    expect(waitingOld.destroyed).toBe(true);
    expect(waitingNew.destroyed).toBe(false);
    expect(slots.size).toBe(4);
  });

  it('never replaces a connection being answered (pipelined requests too); when all are, the new one is closed at once', () => {
    const { slots, open, as } = setUp(2);
    const a = open('a');
    const b = open('b');
    slots.answering(as(a));
    slots.answering(as(a));
    slots.answering(as(b));
    const refused = open('refused');
    expect(refused.destroyed).toBe(true);
    expect([a.destroyed, b.destroyed]).toEqual([false, false]);
    // One of a's two answers is done: it is still being answered.
    slots.answered(as(a));
    expect(open('refused-again').destroyed).toBe(true);
    slots.answered(as(a));
    const c = open('c');
    expect(c.destroyed).toBe(false);
    expect(a.destroyed).toBe(true);
    expect(slots.size).toBe(2);
  });
});
