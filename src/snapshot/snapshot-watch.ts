// `snapshot --watch`: snapshots again whenever the core reports a change (a listing, a change
// event, a refreshed entry, reachability, the approvals), as the mount invalidates the kernel's
// caches then; ticks the core so listings are refreshed after their ttlMs as the mount's
// operations refresh them; retries a run that failed. Knows no snapshot internals.
import type { Log } from '../log.js';
import { errorMessage } from '../private-files.js';

export interface WatchOptions {
  /** Subscribes to the core's change notifications. */
  subscribe(listener: () => void): void;
  /** One snapshot; resolves whether some server's part failed (then it is tried again after retryMs). */
  run(): Promise<{ failed: boolean }>;
  /** Touches the core as a reader would, so a listing older than its ttlMs is refreshed. */
  tick(): void;
  signal: AbortSignal;
  log: Log;
  /** How often tick() runs (default 1 s). */
  tickMs?: number;
  /** Changes arriving within this long of one another make one snapshot (default 250 ms). */
  settleMs?: number;
  /** A failed run is tried again after this long, changes or not (default 30 s). */
  retryMs?: number;
}

/** Runs until `signal` aborts; the first snapshot is made at once. */
export async function watchSnapshots(options: WatchOptions): Promise<void> {
  const { signal } = options;
  const tickMs = options.tickMs ?? 1_000;
  const settleMs = options.settleMs ?? 250;
  const retryMs = options.retryMs ?? 30_000;
  let dirty = true;
  let retryAtMs = Number.POSITIVE_INFINITY;
  let wake: (() => void) | undefined;
  options.subscribe(() => {
    dirty = true;
    wake?.();
  });
  signal.addEventListener('abort', () => wake?.(), { once: true });
  while (!signal.aborted) {
    if (dirty || Date.now() >= retryAtMs) {
      await sleep(settleMs, signal);
      if (signal.aborted) break;
      dirty = false;
      try {
        const { failed } = await options.run();
        retryAtMs = failed ? Date.now() + retryMs : Number.POSITIVE_INFINITY;
      } catch (error) {
        if (signal.aborted) break;
        options.log(`snapshot failed: ${errorMessage(error)}; trying again in ${Math.round(retryMs / 1000)} s or at the next change`);
        retryAtMs = Date.now() + retryMs;
      }
      continue;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, tickMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
    if (!signal.aborted) options.tick();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
