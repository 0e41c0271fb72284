// A tiny concurrency limiter, so scans and hashing of large trees do not open
// thousands of files at once.

/** Returns a function that runs tasks with at most `concurrency` in flight. */
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
