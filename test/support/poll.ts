// Waiting in tests: poll a condition or a value until it holds, with a deadline and a
// message naming what never happened. For assertions, vitest's expect.poll fits better.

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface PollOptions<T> {
  timeoutMs: number;
  /** Pause between two reads (default 25 ms). */
  intervalMs?: number;
  /** The error to throw once `timeoutMs` has passed, given the last value read. */
  timeoutError: (last: T) => Error;
}

/** Reads a value until `accept` holds for it and resolves that value; throws after the deadline. */
export async function pollUntil<T>(read: () => T | Promise<T>, accept: (value: T) => boolean, options: PollOptions<T>): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw options.timeoutError(value);
    await delay(options.intervalMs ?? 25);
  }
}

/** Resolves once `condition` holds (checked every 25 ms); throws after `timeoutMs`, naming `what`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  await pollUntil(condition, (held) => held, {
    timeoutMs,
    timeoutError: () => new Error(`timed out after ${timeoutMs} ms waiting for ${what}`),
  });
}
