// The libfuse 3 edge's two ways of answering serve the same fixture core side by side: one mount
// as it runs by default (the addon answers LOOKUP, GETATTR and READDIR from the names JS pushed,
// and later opens and reads from counted opens), the other with every name answered in JS
// (SKILLS_MOUNT_ADDON_TABLE=0) and the zero-message open model (SKILLS_MOUNT_ZERO_MESSAGE_OPEN=1).
// Random sequences of ordinary operations (stat, cat, reads at offsets, ls, xattrs, writes that
// must fail, missing names) run against each, and every outcome (bytes, sizes, errno text) must be
// the same. (Until 0.2.0 the reference was the libfuse 2 backend, fuse-native, now removed.)
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureMount, run, runBytes } from '../support/fuse-harness.js';
import { prng } from '../support/prng.mjs';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const PATHS = ['', 'skill-a', 'skill-a/SKILL.md', 'skill-a/bad.bin', 'big.bin', 'missing', 'skill-a/missing.md', 'big.bin/child'];
const SEQUENCES = 6;
const STEPS = 40;

let root: string;
const VARIANTS = {
  addon: {},
  js: { SKILLS_MOUNT_ADDON_TABLE: '0', SKILLS_MOUNT_ZERO_MESSAGE_OPEN: '1' },
} as const;
const mounts: Record<keyof typeof VARIANTS, { fixture: FixtureMount; mountpoint: string }> = {} as never;

beforeAll(async () => {
  root = await mkdtemp('/tmp/skills-mount-test-fuzz-');
  for (const variant of ['addon', 'js'] as const) {
    const mountpoint = path.join(root, variant);
    const fixture = FixtureMount.start(mountpoint, VARIANTS[variant]);
    mounts[variant] = { fixture, mountpoint };
    await fixture.ready();
  }
});

afterAll(async () => {
  for (const { fixture } of Object.values(mounts)) await fixture?.stop();
});

/** One operation's outcome, with the mountpoint taken out of messages. */
async function outcome(mountpoint: string, step: { op: string; target: string; offset: number; length: number }): Promise<string> {
  const file = path.join(mountpoint, step.target);
  const clean = (text: string) => text.split(mountpoint).join('MNT').trim();
  switch (step.op) {
    case 'stat': {
      const result = await run('stat', ['-c', '%F %s %a', file]);
      return `${result.code} ${clean(result.stdout)} ${clean(result.stderr)}`;
    }
    case 'cat':
    case 'dd': {
      const args = step.op === 'cat' ? [file] : [`if=${file}`, 'iflag=skip_bytes,count_bytes,fullblock', `skip=${step.offset}`, `count=${step.length}`, 'bs=65536', 'status=none'];
      const result = await runBytes(step.op, args);
      const digest = (await import('node:crypto')).createHash('sha256').update(result.stdout).digest('hex').slice(0, 16);
      return `${result.code} ${result.stdout.length} ${digest} ${clean(result.stderr)}`;
    }
    case 'ls': {
      const result = await run('ls', ['-la', '--time-style=+', file]);
      // Link counts and owners aside (columns 1-3); names, modes and sizes must agree.
      const lines = result.stdout.split('\n').filter(Boolean).map((line) => line.split(/\s+/).filter((_, index) => index !== 1 && index !== 2 && index !== 3).join(' '));
      return `${result.code} ${clean(lines.join('|'))} ${clean(result.stderr)}`;
    }
    case 'xattr': {
      const result = await run('python3', ['-c', 'import os,sys\ntry:\n  print(sorted(os.listxattr(sys.argv[1])), [os.getxattr(sys.argv[1], n) for n in sorted(os.listxattr(sys.argv[1]))])\nexcept OSError as e: print("errno", e.errno)', file]);
      return `${result.code} ${result.stdout.trim()}`;
    }
    case 'write': {
      const result = await run('sh', ['-c', 'echo x >> "$1"', 'w', file]);
      return `${result.code} ${clean(result.stderr).replace(/^sh: \d+: /, '')}`;
    }
    default:
      throw new Error(step.op);
  }
}

describe('the addon\'s own answers and JS\'s, over the same core', () => {
  it('agree on every outcome of random operation sequences', async () => {
    const ops = ['stat', 'cat', 'dd', 'ls', 'xattr', 'write'];
    const differences: string[] = [];
    for (let sequence = 0; sequence < SEQUENCES; sequence++) {
      const random = prng(1000 + sequence);
      for (let step = 0; step < STEPS; step++) {
        const chosen = { op: ops[Math.floor(random() * ops.length)]!, target: PATHS[Math.floor(random() * PATHS.length)]!, offset: Math.floor(random() * 1_100_000), length: 1 + Math.floor(random() * 300_000) };
        const [addon, js] = [await outcome(mounts.addon.mountpoint, chosen), await outcome(mounts.js.mountpoint, chosen)];
        if (addon !== js) differences.push(`seed ${1000 + sequence} step ${step} ${JSON.stringify(chosen)}:\n  addon: ${addon}\n  js: ${js}`);
      }
    }
    expect(differences).toEqual([]);
  }, 240_000);
});
