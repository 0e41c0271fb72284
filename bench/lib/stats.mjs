// Small statistics and timing helpers for the benchmark: medians, percentiles, ratios.

/** The median of a non-empty list of numbers. */
export function median(values) {
  return percentile(values, 50);
}

/** The p-th percentile (nearest rank) of a non-empty list of numbers. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Milliseconds an async function took, with its result. */
export async function timed(run) {
  const startedMs = performance.now();
  const result = await run();
  return { ms: performance.now() - startedMs, result };
}

/** Runs `job` over `items` with at most `limit` in flight; resolves when all are done. */
export async function inParallel(items, limit, job) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      await job(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Formats milliseconds with a precision that suits their size. */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(1)} µs`;
}

export function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
