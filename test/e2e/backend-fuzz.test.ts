// Both FUSE backends serve the same fixture core side by side; random sequences of ordinary
// operations (stat, cat, reads at offsets, ls, xattrs, writes that must fail, missing names)
// run against each mount, and every outcome (bytes, sizes, errno text) must be the same.
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
const mounts: Record<'libfuse3' | 'libfuse2', { fixture: FixtureMount; mountpoint: string }> = {} as never;

beforeAll(async () => {
  root = await mkdtemp('/tmp/skills-mount-test-fuzz-');
  for (const backend of ['libfuse3', 'libfuse2'] as const) {
    const mountpoint = path.join(root, backend);
    const fixture = FixtureMount.start(mountpoint, { SKILLS_MOUNT_FUSE_BACKEND: backend });
    mounts[backend] = { fixture, mountpoint };
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
      // Inode numbers and link counts are each backend's own; names, modes and sizes are not.
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

describe('the libfuse3 and libfuse2 backends over the same core', () => {
  it('agree on every outcome of random operation sequences', async () => {
    const ops = ['stat', 'cat', 'dd', 'ls', 'xattr', 'write'];
    const differences: string[] = [];
    for (let sequence = 0; sequence < SEQUENCES; sequence++) {
      const random = prng(1000 + sequence);
      for (let step = 0; step < STEPS; step++) {
        const chosen = { op: ops[Math.floor(random() * ops.length)]!, target: PATHS[Math.floor(random() * PATHS.length)]!, offset: Math.floor(random() * 1_100_000), length: 1 + Math.floor(random() * 300_000) };
        const [three, two] = [await outcome(mounts.libfuse3.mountpoint, chosen), await outcome(mounts.libfuse2.mountpoint, chosen)];
        if (three !== two) differences.push(`seed ${1000 + sequence} step ${step} ${JSON.stringify(chosen)}:\n  libfuse3: ${three}\n  libfuse2: ${two}`);
      }
    }
    expect(differences).toEqual([]);
  }, 240_000);
});
