// The benchmark's quick mode end to end: it must run, cover every row of issues 5 and 19 with
// finite numbers, each row that involves a mount on each backend measured by default (libfuse3), and count on each backend
// exactly one MCP content read per cold file and none for warm reads, stats of listed files or
// ls -lR. Timings are never asserted (shared machine).
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTestDir, REPO } from '../support/mount-harness.js';
import { fuseAvailable, requireFuse } from '../support/require-fuse.js';

requireFuse();

const BACKENDS = ['libfuse3'];
const CATALOGS = ['synthetic', 'corpus'];

/** Rows measured on each backend, by id. */
const BACKEND_ROWS = [
  'round-trip',
  'round-trip/one-vcpu',
  'round-trip/across-vcpus',
  'requests/round-trip',
  ...CATALOGS.flatMap((catalog) => ['cold-seq', 'cold-par', 'warm-cat', 'warm-one', 'warm-after-restart', 'approved-view'].map((kind) => `${kind}/${catalog}`)),
  'ls-lR',
  'rss/listing',
  // 16 MiB (1 MiB in the quick run): per transport and era, a new process's first large read and its second.
  ...['big-stdio', 'big-http', 'big-http-legacy'].flatMap((kind) => [kind, `${kind}/second`]),
  'latency/stat/p50',
  'latency/stat/p99',
  'latency/cat/p50',
  'latency/cat/p99',
  'change/learned',
  'change/written',
  'requests/cold-file',
  'requests/warm-file',
  'requests/warm-cat',
  'requests/stat',
  'requests/ls-lR',
  ...CATALOGS.map((catalog) => `requests/after-restart/${catalog}`),
];

/** Rows measured once (no mount, or one backend by design), by id. */
const ONCE_ROWS = [
  'floor',
  ...CATALOGS.map((catalog) => `disk-cache-cost/${catalog}`),
  'cold-seq-disk-cache/corpus',
  'snapshot/cold',
  'snapshot/unchanged',
  'link/cold',
  'link/unchanged',
  'team/lock',
  'team/link-cold',
  'team/link-unchanged',
  'team/outdated',
  ...[100, 300, 1000].flatMap((skills) => [`ready/${skills}`, `rss/${skills}`]),
  'ready/growth',
  'rss/per-file',
  // Issue 51: skills-mount serve in front of skills-serve, no mount.
  'serve/warm',
  'serve/cold',
  'serve/concurrent',
  'serve/concurrent-latency',
  'serve/rss',
];

/** MCP content reads each request-count row must show on every backend. */
const EXPECTED_READS: Record<string, number> = {
  'requests/cold-file': 1,
  'requests/warm-file': 0,
  'requests/warm-cat': 0,
  'requests/stat': 0,
  'requests/ls-lR': 0,
  // After a restart every file comes from the verified disk cache.
  'requests/after-restart/synthetic': 0,
  'requests/after-restart/corpus': 0,
};

interface Cell {
  measured: number;
  ratio: number | null;
}

interface Row {
  id: string;
  measured?: number;
  baseline: number | null;
  ratio?: number | null;
  met: boolean | null;
  target: string;
  judgedBy?: string;
  backends?: Record<string, Cell>;
}

interface Results {
  mode: string;
  backends: string[];
  profile: { changes: Record<string, { count: number }> };
  rows: Row[];
  changes: Record<string, { samples: unknown[]; timedOut?: string }>;
  snapshot: { files: number; requests: Record<'cold' | 'second', Array<{ contentReads: number }>> };
}

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!fuseAvailable())('npm run bench -- --quick', () => {
  it('writes every row with finite numbers on each backend measured, and the request counts are 1/0/0/0 on each', { timeout: 180_000 }, async () => {
    dir = await makeTestDir();
    const resultsFile = path.join(dir, 'results.json');
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [path.join(REPO, 'bench', 'run.mjs'), '--quick', '--work-dir', dir!, '--results', resultsFile],
        { timeout: 170_000, maxBuffer: 1 << 24 },
        (error, out, err) => (error ? reject(new Error(`bench failed: ${error.message}\n${err}`)) : resolve(out)),
      ),
    );
    const results = JSON.parse(await readFile(resultsFile, 'utf8')) as Results;
    expect(results.mode).toBe('quick');
    expect(results.backends).toEqual(BACKENDS);
    const finite = (what: string, value: number | null | undefined, optional: boolean) => {
      if (optional && value === null) return;
      expect(Number.isFinite(value), `${what}: ${value}`).toBe(true);
    };
    const perBackend = results.rows.filter((row) => row.backends !== undefined);
    const once = results.rows.filter((row) => row.backends === undefined);
    expect(perBackend.map((row) => row.id).sort()).toEqual([...BACKEND_ROWS].sort());
    expect(once.map((row) => row.id).sort()).toEqual([...ONCE_ROWS].sort());
    // Through the gateway, every answer is the file's bytes: no error, nothing wrong, even in the smoke run.
    expect(once.find((row) => row.id === 'serve/concurrent')?.met, 'serve/concurrent: 0 errors, 0 wrong bytes').toBe(true);
    for (const row of perBackend) {
      expect(Object.keys(row.backends!), row.id).toEqual(BACKENDS);
      expect(row.judgedBy, row.id).toBe('libfuse3');
      finite(`${row.id} baseline`, row.baseline, true);
      for (const backend of BACKENDS) {
        finite(`${row.id} ${backend} measured`, row.backends![backend]!.measured, false);
        finite(`${row.id} ${backend} ratio`, row.backends![backend]!.ratio, true);
      }
    }
    for (const row of once) {
      finite(`${row.id} measured`, row.measured, false);
      finite(`${row.id} baseline`, row.baseline, true);
      finite(`${row.id} ratio`, row.ratio, true);
    }
    const cell = (id: string, backend: string) => results.rows.find((row) => row.id === id)?.backends?.[backend]?.measured;
    for (const backend of BACKENDS) {
      for (const [id, reads] of Object.entries(EXPECTED_READS)) expect(cell(id, backend), `${id} on ${backend}`).toBe(reads);
      // Every planned change reached cat before its deadline.
      expect(results.changes[backend]!.timedOut, backend).toBeUndefined();
      expect(results.changes[backend]!.samples, backend).toHaveLength(results.profile.changes[backend]!.count);
    }
    // With timeouts 0, a stat after the first is answered by the addon: no request reaches JS.
    expect(cell('requests/round-trip', 'libfuse3')).toBe(0);
    // A cold snapshot reads every listed file once; a second, unchanged one reads none.
    expect(results.snapshot.requests.cold.map((counts) => counts.contentReads)).toEqual([results.snapshot.files]);
    expect(results.snapshot.requests.second.map((counts) => counts.contentReads)).toEqual([0]);
    // The tables a person reads show the same rows.
    expect(stdout).toContain('| workload | libfuse3 | ratio | baseline | target | met? (libfuse3) |');
    expect(stdout).toContain('| workload | measured | baseline | ratio | target | met? |');
    expect(stdout.match(/^\| (?!workload|---)/gm)).toHaveLength(BACKEND_ROWS.length + ONCE_ROWS.length);
  });
});
