// The benchmark's quick mode end to end: it must run, cover every row of issue 5's table
// with finite numbers, and count exactly one MCP content read per cold file and none for
// warm reads, stats of listed files or ls -lR. Timings are never asserted (shared machine).
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTestDir, REPO } from '../support/mount-harness.js';
import { fuseAvailable, requireFuse } from '../support/require-fuse.js';

requireFuse();

/** Every figure the table must have, by row id. */
const EXPECTED_ROWS = [
  'floor',
  ...['synthetic', 'corpus'].flatMap((catalog) => ['cold-seq', 'cold-par', 'warm-cat', 'warm-one', 'warm-after-restart', 'approved-view', 'disk-cache-cost'].map((kind) => `${kind}/${catalog}`)),
  'ls-lR',
  'rss/listing',
  'snapshot/cold',
  'snapshot/unchanged',
  'big-stdio',
  'big-http',
  'latency/stat/p50',
  'latency/stat/p99',
  'latency/cat/p50',
  'latency/cat/p99',
  'requests/cold-file',
  'requests/warm-file',
  'requests/warm-cat',
  'requests/stat',
  'requests/ls-lR',
  'requests/after-restart/synthetic',
  'requests/after-restart/corpus',
  ...[100, 300, 1000].flatMap((skills) => [`ready/${skills}`, `rss/${skills}`]),
  'ready/growth',
  'rss/per-file',
];

interface Row {
  id: string;
  measured: number;
  baseline: number | null;
  ratio: number | null;
  met: boolean | null;
  target: string;
}

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!fuseAvailable())('npm run bench -- --quick', () => {
  it('writes every row with finite numbers, and the request counts are 1/0/0/0', { timeout: 120_000 }, async () => {
    dir = await makeTestDir();
    const resultsFile = path.join(dir, 'results.json');
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [path.join(REPO, 'bench', 'run.mjs'), '--quick', '--work-dir', dir!, '--results', resultsFile],
        { timeout: 110_000, maxBuffer: 1 << 24 },
        (error, out, err) => (error ? reject(new Error(`bench failed: ${error.message}\n${err}`)) : resolve(out)),
      ),
    );
    const results = JSON.parse(await readFile(resultsFile, 'utf8')) as { mode: string; rows: Row[]; snapshot: { files: number; requests: Record<'cold' | 'second', Array<{ contentReads: number }>> } };
    expect(results.mode).toBe('quick');
    expect(results.rows.map((row) => row.id).sort()).toEqual([...EXPECTED_ROWS].sort());
    for (const row of results.rows) {
      expect(Number.isFinite(row.measured), `${row.id} measured ${row.measured}`).toBe(true);
      if (row.baseline !== null) expect(Number.isFinite(row.baseline), `${row.id} baseline ${row.baseline}`).toBe(true);
      if (row.ratio !== null) expect(Number.isFinite(row.ratio), `${row.id} ratio ${row.ratio}`).toBe(true);
    }
    const measured = (id: string) => results.rows.find((row) => row.id === id)?.measured;
    expect(measured('requests/cold-file')).toBe(1);
    expect(measured('requests/warm-file')).toBe(0);
    expect(measured('requests/warm-cat')).toBe(0);
    expect(measured('requests/stat')).toBe(0);
    expect(measured('requests/ls-lR')).toBe(0);
    // After a restart every file comes from the verified disk cache.
    expect(measured('requests/after-restart/synthetic')).toBe(0);
    expect(measured('requests/after-restart/corpus')).toBe(0);
    // A cold snapshot reads every listed file once; a second, unchanged one reads none.
    expect(results.snapshot.requests.cold.map((counts) => counts.contentReads)).toEqual([results.snapshot.files]);
    expect(results.snapshot.requests.second.map((counts) => counts.contentReads)).toEqual([0]);
    // The table a person reads shows the same rows.
    expect(stdout).toContain('| workload | measured | baseline | ratio | target | met? |');
    expect(stdout.match(/^\| (?!workload|---)/gm)).toHaveLength(EXPECTED_ROWS.length);
  });
});
