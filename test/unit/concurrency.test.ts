// The limits on how much runs at once: never more in flight than asked, results in the items'
// order, and after a failure nothing new starts and nothing is left running when it rejects.
import { describe, expect, it } from 'vitest';
import { createLimiter, mapLimited } from '../../src/concurrency.js';

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** A job that records how many run at once, finishing in an order unlike the items'. */
function counted() {
  let running = 0;
  const state = { peak: 0, started: [] as number[], finished: [] as number[] };
  const job = async (n: number): Promise<number> => {
    state.started.push(n);
    running += 1;
    state.peak = Math.max(state.peak, running);
    for (let i = 0; i < (n * 7) % 5; i++) await tick();
    running -= 1;
    state.finished.push(n);
    return n * 10;
  };
  return { state, job };
}

describe('createLimiter', () => {
  it('runs every task, at most N at once, each resolving to its own result', async () => {
    const { state, job } = counted();
    const limit = createLimiter(3);
    const items = Array.from({ length: 40 }, (_, i) => i);
    expect(await Promise.all(items.map((n) => limit(() => job(n))))).toEqual(items.map((n) => n * 10));
    expect(state.peak).toBe(3);
    expect(state.started).toEqual(items); // queued in arrival order
  });

  it('a failed task frees its place: the queued ones still run', async () => {
    const limit = createLimiter(1);
    const failed = limit(() => Promise.reject(new Error('boom')));
    const later = limit(async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await later).toBe('ran');
  });
});

describe('mapLimited', () => {
  it('at most N at once, results in the items\' order whatever order they finish in', async () => {
    const { state, job } = counted();
    const items = Array.from({ length: 25 }, (_, i) => i);
    expect(await mapLimited(items, 4, job)).toEqual(items.map((n) => n * 10));
    expect(state.peak).toBe(4);
    expect(state.finished).not.toEqual(items);
    expect(await mapLimited([], 4, job)).toEqual([]);
  });

  it('after a failure no new item starts, and it rejects only once those in flight have finished', async () => {
    const { state, job } = counted();
    const items = Array.from({ length: 30 }, (_, i) => i);
    const failing = (n: number) => (n === 5 ? Promise.reject(new Error('item 5')) : job(n));
    await expect(mapLimited(items, 3, failing)).rejects.toThrow('item 5');
    expect(state.started.length).toBeLessThan(10);
    expect(state.finished.sort((a, b) => a - b)).toEqual(state.started.sort((a, b) => a - b));
  });
});
