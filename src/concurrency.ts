// Bounding how much runs at once, so a large tree is not read, hashed or fetched with thousands
// of files open: a gate for tasks that arrive over time, and a map over a list. Knows nothing of
// what the tasks do.

/** Returns a function that runs tasks with at most `concurrency` in flight, the rest queued in arrival order. */
export function createLimiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  // A queue with a moving head: Array#shift is O(n), and scans queue tens of thousands.
  let waiting: Array<() => void> = [];
  let head = 0;
  const release = (): void => {
    active--;
    if (head < waiting.length) {
      const next = waiting[head++]!;
      if (head > 1024 && head * 2 > waiting.length) {
        waiting = waiting.slice(head);
        head = 0;
      }
      next();
    }
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      release();
    }
  };
}

/**
 * `job` over `items` in their order, at most `limit` at once; the results in the items' order.
 * After a job fails no further one starts, and once those in flight have settled it rejects
 * with that failure (so nothing of it still runs when the caller cleans up).
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        results[index] = await job(items[index]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}
