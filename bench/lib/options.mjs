// Command line of the benchmark: --quick (or BENCH_QUICK=1) for the smoke-sized run,
// --backends, --work-dir DIR, --corpus DIR, --results FILE, --runs N.
import { parseArgs } from 'node:util';
import { RESULTS_FILE } from './paths.mjs';

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * The FUSE backends a run can measure, in the order the table shows them: skills-mount as it runs
 * (libfuse3; the libfuse 2 backend, fuse-native, is gone since 0.2.0), libfuse3 with zero-message open (the open model it does not use by default,
 * for comparison: docs/fuse-edge.md says why) and libfuse3 with the addon's table of pushed
 * names off (every lookup, getattr and listing in JS: the comparison before and after it);
 * these two measured only when named in --backends.
 */
export const BACKENDS = ['libfuse3', 'libfuse3-no-table', 'libfuse3-no-copies', 'libfuse3-zero-message-open'];
/** What a run measures without --backends. */
export const DEFAULT_BACKENDS = ['libfuse3'];

/** Sizes of every workload, full (the issue's) or quick (a smoke run of about a minute). */
export const PROFILES = {
  full: {
    runs: 5,
    // 1,000 files of 200 B .. 1 MiB, every fourth extra file binary.
    synthetic: { skills: 200, files: 5, group: 50, sizes: 'realistic' },
    // The per-skill limit is 16 MiB including SKILL.md, so the file is 4 KiB short of it.
    bigBytes: 16 * MIB - 4 * KIB,
    listing: { skills: 10_000, files: 5 },
    link: { skills: 1_000, files: 3 },
    pickupSamples: 5,
    scaling: [1_000, 10_000, 100_000],
    scalingPageSize: 1_000,
    pings: 200,
    statSamples: 2_000,
    catSamples: 200,
    roundTripSamples: 2_000,
    changes: {
      servers: 5,
      libfuse3: { count: 20, deadlineSeconds: 10 },
      'libfuse3-no-table': { count: 20, deadlineSeconds: 10 },
      'libfuse3-no-copies': { count: 20, deadlineSeconds: 10 },
      'libfuse3-zero-message-open': { count: 20, deadlineSeconds: 10 },
    },
  },
  quick: {
    runs: 1,
    synthetic: { skills: 20, files: 5, group: 10, sizes: 'realistic' },
    bigBytes: 1 * MIB,
    listing: { skills: 200, files: 5 },
    link: { skills: 100, files: 3 },
    pickupSamples: 0,
    scaling: [100, 300, 1_000],
    scalingPageSize: 1_000,
    pings: 50,
    statSamples: 300,
    catSamples: 30,
    roundTripSamples: 300,
    changes: {
      servers: 5,
      libfuse3: { count: 5, deadlineSeconds: 10 },
      'libfuse3-no-table': { count: 5, deadlineSeconds: 10 },
      'libfuse3-no-copies': { count: 5, deadlineSeconds: 10 },
      'libfuse3-zero-message-open': { count: 5, deadlineSeconds: 10 },
    },
    // The corpus's top-level directories over either bound (its two 16 MiB skills, its 512-file
    // skill) would take most of the run on both backends.
    corpusTrim: { maxBytes: 1 * MIB, maxFiles: 64 },
  },
};

export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      backends: { type: 'string' },
      'work-dir': { type: 'string' },
      corpus: { type: 'string' },
      results: { type: 'string' },
      runs: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench -- [--quick] [--backends LIST] [--runs N] [--work-dir DIR] [--corpus DIR] [--results FILE]\n' +
        '  --quick          a reduced smoke run (also BENCH_QUICK=1)\n' +
        `  --backends LIST  the FUSE backends to measure, comma-separated, of ${BACKENDS.join(', ')} (default ${DEFAULT_BACKENDS.join(',')}); targets are judged on the first of them\n` +
        '  --runs N         runs per figure (default 5; quick 1); medians are reported\n' +
        '  --work-dir DIR   where catalogs, copies and mountpoints go (default /dev/shm and the temp dir)\n' +
        '  --corpus DIR     a real skills corpus (default: the generated test corpus, test/support/test-corpus.mjs)\n' +
        `  --results FILE   where results are written (default ${RESULTS_FILE})\n`,
    );
    process.exit(0);
  }
  const quick = values.quick === true || process.env.BENCH_QUICK === '1';
  const profile = { ...PROFILES[quick ? 'quick' : 'full'] };
  if (values.runs !== undefined) {
    profile.runs = Number(values.runs);
    if (!Number.isInteger(profile.runs) || profile.runs < 1) throw new Error(`--runs must be a positive integer, not "${values.runs}"`);
  }
  return {
    mode: quick ? 'quick' : 'full',
    profile,
    backends: parseBackends(values.backends),
    workDir: values['work-dir'],
    corpusDir: values.corpus,
    resultsFile: values.results ?? RESULTS_FILE,
  };
}

/** "libfuse3,libfuse3-no-table" -> the backends in the table's order; every name known, none twice. */
function parseBackends(text) {
  if (text === undefined) return [...DEFAULT_BACKENDS];
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !BACKENDS.includes(name));
  if (unknown.length > 0 || names.length === 0) throw new Error(`--backends must list some of ${BACKENDS.join(', ')}, not "${text}"`);
  if (new Set(names).size !== names.length) throw new Error(`--backends names a backend twice: "${text}"`);
  return BACKENDS.filter((name) => names.includes(name));
}
