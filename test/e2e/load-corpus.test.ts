// Concurrent readers (cat, grep -r, find -exec sha256sum) over the whole corpus through a
// real mount whose server answers 50 ms late: no error, no hang, every byte identical to
// the source, peak RSS reported. Reduced here (8 readers, 1 pass; LOAD_READERS and
// LOAD_PASSES override); the full run is `node scripts/load-test.mjs` (16 readers, 3 passes).
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without type declarations.
import { runLoad } from '../../scripts/load-test.mjs';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

interface LoadFigures {
  readers: number;
  passes: number;
  bytesRead: number;
  errors: number;
  errorSamples: string[];
  wallMs: number;
  peakRssMiB: number;
}

describe('load', () => {
  it('concurrent readers over the corpus with a 50 ms server: no error, no hang, every byte right', async () => {
    const readers = Number(process.env['LOAD_READERS'] ?? 8);
    const passes = Number(process.env['LOAD_PASSES'] ?? 1);
    const figures = (await runLoad({ readers, passes, delayMs: 50 })) as LoadFigures;
    console.log(`load: ${JSON.stringify(figures)}`);
    expect(figures.errorSamples).toEqual([]);
    expect(figures.errors).toBe(0);
    expect(figures.bytesRead).toBeGreaterThan(readers * passes * 5_000_000);
    expect(figures.peakRssMiB).toBeLessThan(256 + 400);
  }, 300_000);
});
