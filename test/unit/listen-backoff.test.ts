// Item 11 of issue 22, on the change listener alone (fake clock, a fake client whose listen
// streams end when the test says): an acknowledged stream that ends at once does not start
// the backoff over; one that stayed open 30 s does; reopening re-lists at most once in 30 s,
// later reopens within that window sharing one trailing re-listing.
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChangeListener } from '../../src/mcp/change-listener.js';

/** A client whose listen() acknowledges at once; each stream ends when `end(i)` is called. */
function fakeClient() {
  const opens: number[] = [];
  const enders: Array<() => void> = [];
  const client = {
    listen: async () => {
      opens.push(Date.now());
      let end!: (cause: string) => void;
      const closed = new Promise<string>((resolve) => (end = resolve));
      enders.push(() => end('remote'));
      return { closed, close: async () => end('local') };
    },
  } as unknown as Client;
  return { client, opens, endLatest: () => enders.at(-1)!() };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('reopening a dropped subscriptions/listen stream', () => {
  it('doubles the delay while streams end at once, and starts over only after one stayed open 30 s', async () => {
    const { client, opens, endLatest } = fakeClient();
    let relists = 0;
    const listener = new ChangeListener(client, { listChanged: true, subscribe: false, timeoutMs: 1_000, log: () => undefined, onReopened: () => relists++ });
    listener.start();
    const ends: number[] = [];
    /** Lets the stream now open live `ms`, ends it, and waits for the next open. */
    const liveThenEnd = async (ms: number) => {
      const count = opens.length;
      await vi.advanceTimersByTimeAsync(ms);
      endLatest();
      ends.push(Date.now());
      for (let waited = 0; opens.length === count && waited < 120_000; waited += 10) await vi.advanceTimersByTimeAsync(10);
    };
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 5; i++) await liveThenEnd(20);
    const delays = ends.map((at, i) => opens[i + 1]! - at);
    // Each stream lived 20 ms: an acknowledgement does not start the backoff over.
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    // One re-listing at the first reopen; the later ones within 30 s share one, at its end.
    expect(relists).toBe(2);
    // A stream that stayed open 30 s starts it over.
    await liveThenEnd(30_000);
    expect(opens.at(-1)! - ends.at(-1)!).toBe(1_000);
    await listener.close();
  });
});
